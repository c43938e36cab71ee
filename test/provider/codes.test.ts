import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { CLASS_ADVICE, CODE_MEANINGS, classifyStatusCode, describeStatusCode } from '../../src/provider/codes.js';
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
  ];
  for (const [code, cls] of cases) {
    it(`${code} is ${cls}`, () => assert.equal(classifyStatusCode(code), cls));
  }

  it('unknown and odd codes are batch-rejected (never retried automatically)', () => {
    for (const code of ['999999', '111127', '', 'abc', '0', '1600001']) assert.equal(classifyStatusCode(code), 'batch-rejected', code);
  });
});

describe('advice', () => {
  it('every class has advice', () => {
    for (const cls of ['account-fatal', 'clock', 'transient', 'rate-limited', 'number-rejected', 'batch-rejected', 'duplicate-request', 'ambiguous'] as const) {
      assert.ok(CLASS_ADVICE[cls].length > 10, cls);
    }
  });

  it('describes a well-known code with its meaning, others with the class advice', () => {
    assert.equal(describeStatusCode('111142'), '111142: account balance insufficient: top up the account');
    assert.equal(describeStatusCode('161055'), `161055: ${CLASS_ADVICE.transient}`);
    assert.ok(Object.keys(CODE_MEANINGS).every((c) => /^\d{6}$/.test(c)));
  });
});
