import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  accountStopCode,
  CLASS_ADVICE,
  CODE_MEANINGS,
  classifyStatusCode,
  describeStatusCode,
  isKnownStatusCode,
} from '../../src/provider/codes.js';
import type { RejectionClass } from '../../src/provider/types.js';

describe('classifyStatusCode', () => {
  const cases: Array<[string, RejectionClass]> = [
    ['111109', 'account-fatal'],
    ['111100', 'account-fatal'],
    ['111141', 'account-fatal'],
    ['111142', 'account-fatal'],
    ['111175', 'account-fatal'],
    ['111181', 'account-fatal'],
    ['160053', 'account-fatal'],
    ['111106', 'clock'], // a single code inside an account-fatal range
    ['111050', 'transient'],
    ['111111', 'transient'],
    ['160000', 'transient'],
    ['160005', 'transient'],
    ['161023', 'transient'],
    ['160038', 'rate-limited'],
    ['112314', 'rate-limited'],
    ['160034', 'number-rejected'],
    ['160042', 'number-rejected'],
    ['160048', 'batch-rejected'],
    ['160052', 'batch-rejected'],
    ['112311', 'batch-rejected'],
    ['160054', 'duplicate-request'],
    ['160050', 'ambiguous'],
    ['160064', 'ambiguous'],
    // More codes from the public tables (provider-facts.md)
    ['111115', 'account-fatal'],
    ['111112', 'transient'],
    ['111114', 'transient'],
    ['111116', 'transient'],
    ['111212', 'account-fatal'],
    ['111226', 'account-fatal'],
    ['160071', 'outside-hours'],
    ['160059', 'number-rejected'],
    ['160070', 'number-rejected'],
    ['112609', 'batch-rejected'],
    ['112610', 'batch-rejected'],
    ['112611', 'batch-rejected'],
    ['112612', 'batch-rejected'],
    ['111104', 'account-fatal'],
    ['111105', 'account-fatal'],
  ];
  for (const [code, cls] of cases) {
    it(`${code} is ${cls}`, () => assert.equal(classifyStatusCode(code), cls));
  }

  it('unknown and odd codes are batch-rejected (never retried automatically)', () => {
    for (const code of ['999999', '111127', '', 'abc', '0', '1600001'])
      assert.equal(classifyStatusCode(code), 'batch-rejected', code);
  });

  it('tells the codes the tables explain from those they do not', () => {
    for (const code of ['160031', '111115', '111175', '161023'])
      assert.equal(isKnownStatusCode(code), true, code);
    for (const code of ['999999', '111127', '', 'abc'])
      assert.equal(isKnownStatusCode(code), false, code);
  });
});

describe('advice', () => {
  it('every class has advice', () => {
    for (const cls of [
      'account-fatal',
      'clock',
      'transient',
      'rate-limited',
      'number-rejected',
      'batch-rejected',
      'duplicate-request',
      'ambiguous',
      'outside-hours',
    ] as const) {
      assert.ok(CLASS_ADVICE[cls].length > 10, cls);
    }
  });

  it('describes a well-known code with its meaning, others with the class advice', () => {
    assert.equal(
      describeStatusCode('111142'),
      '111142: account balance insufficient: top up the account',
    );
    assert.equal(describeStatusCode('161055'), `161055: ${CLASS_ADVICE.transient}`);
    assert.ok(Object.keys(CODE_MEANINGS).every((c) => /^\d{6}$/.test(c)));
  });
});

describe('accountStopCode', () => {
  it('names what the operator has to fix, for every code that stops the account', () => {
    const expected: Record<string, string> = {
      '111100': 'E_PROVIDER_AUTH',
      '111109': 'E_PROVIDER_AUTH',
      '111143': 'E_PROVIDER_AUTH',
      '111138': 'E_PROVIDER_ACCOUNT',
      '111141': 'E_PROVIDER_ACCOUNT',
      '111142': 'E_PROVIDER_BALANCE',
      '111181': 'E_PROVIDER_APP',
      '111182': 'E_PROVIDER_APP',
      '111212': 'E_PROVIDER_APP',
      '112310': 'E_PROVIDER_APP',
      '111115': 'E_PROVIDER_IP',
      '160053': 'E_PROVIDER_IP',
      '111106': 'E_PROVIDER_CLOCK',
      '111113': 'E_PROVIDER_CLOCK',
    };
    for (const [code, error] of Object.entries(expected))
      assert.equal(accountStopCode(code), error, code);
    // Every account-fatal code of the tables gets one of them.
    for (let n = 111100; n <= 111182; n++)
      if (classifyStatusCode(String(n)) === 'account-fatal')
        assert.match(accountStopCode(String(n)), /^E_PROVIDER_[A-Z]+$/);
  });
});
