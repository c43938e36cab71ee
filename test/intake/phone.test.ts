// Phone normalisation: every rule of the issue, one table row each.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { normalisePhone } from '../../src/intake/phone.js';

const ok = (raw: string, phone: string, allowInternational = false) => ({
  raw,
  allowInternational,
  expected: { ok: true, phone },
});
const bad = (raw: string, reason: RegExp, allowInternational = false) => ({
  raw,
  allowInternational,
  reason,
});

const VALID = [
  ok('13800138000', '13800138000'),
  ok('19912345678', '19912345678'),
  ok('138 0013 8000', '13800138000'),
  ok(' 13800138000 ', '13800138000'),
  ok('138-0013-8000', '13800138000'),
  ok('(138) 0013-8000', '13800138000'),
  ok('138\u30000013\u30008000', '13800138000'), // ideographic (full-width) space
  ok('138\u00a00013\u00a08000', '13800138000'), // NBSP
  ok('１３８００１３８０００', '13800138000'), // full-width digits
  ok('＋８６ １３８ ００１３ ８０００', '13800138000'), // full-width plus too
  ok('（１３８）００１３－８０００', '13800138000'), // full-width parentheses and hyphen
  ok('+8613800138000', '13800138000'),
  ok('+86 138 0013 8000', '13800138000'),
  ok('008613800138000', '13800138000'),
  ok('0086-138-0013-8000', '13800138000'),
  ok('8613800138000', '13800138000'),
  ok('13800138000.0', '13800138000'),
  ok('8613800138000.0', '13800138000'),
  ok('+8613800138000', '13800138000', true),
  ok('+14155550123', '0014155550123', true),
  ok('+44 20 7946 0958', '00442079460958', true),
  ok('0014155550123', '0014155550123', true),
  ok('+852 6123 4567', '0085261234567', true),
  ok("'13800138005", '13800138005'), // a spreadsheet's "this is text" apostrophe
  ok('="13800138006"', '13800138006'), // the formula that keeps a number as text in a CSV
  ok('138\u200b0013\u200b8007', '13800138007'), // zero-width spaces pasted from a web page
  ok('\ufeff13800138008', '13800138008'),
];

const INVALID = [
  bad('', /^phone number is empty$/),
  bad('   ', /^phone number is empty$/),
  bad('\u3000', /^phone number is empty$/),
  bad('1.38E+10', /scientific notation.*digits are lost/),
  bad('1.38e10', /scientific notation.*digits are lost/),
  bad('1.38001E+10', /scientific notation/),
  bad('１．３８Ｅ＋１０', /scientific notation/),
  bad('010-12345678', /not a mainland China mobile number/), // landline
  bad('(010) 1234 5678', /not a mainland China mobile number/),
  bad('12800138000', /not a mainland China mobile number/), // 12x is not mobile
  bad('1380013800', /not a mainland China mobile number/), // 10 digits
  bad('138001380001', /not a mainland China mobile number/), // 12 digits
  bad('+8610 1234 5678', /not a mainland China mobile number/), // +86 landline, even with international on
  bad('+86101234567', /not a mainland China mobile number/, true),
  bad('13800l38000', /characters other than digits/),
  bad('tel:13800138000', /characters other than digits/),
  bad('="13800138000', /characters other than digits/), // a formula cut short is not a number
  bad("'", /^phone number is empty$/),
  bad('+14155550123', /^international numbers are not enabled \(allowInternational\)$/),
  bad('0014155550123', /^international numbers are not enabled \(allowInternational\)$/),
  bad('+1 415', /6 to 15 digits/, true),
  bad('+1234567890123456', /6 to 15 digits/, true),
  bad('+0123456789', /country code/, true),
];

describe('normalisePhone', () => {
  for (const { raw, allowInternational, expected } of VALID) {
    it(`accepts ${JSON.stringify(raw)}${allowInternational ? ' (international on)' : ''}`, () => {
      assert.deepEqual(normalisePhone(raw, allowInternational), expected);
    });
  }
  for (const { raw, allowInternational, reason } of INVALID) {
    it(`refuses ${JSON.stringify(raw)}${allowInternational ? ' (international on)' : ''}`, () => {
      const result = normalisePhone(raw, allowInternational);
      assert.equal(result.ok, false);
      if (!result.ok) assert.match(result.reason, reason);
    });
  }
});
