// Phone number normalisation: what people and spreadsheets write in a phone column, turned into
// what the provider accepts (11-digit mainland mobile, or 00 + digits for other countries).
// Every row passes through here, so the common case (already clean) is one regex test.

export type PhoneResult = { ok: true; phone: string } | { ok: false; reason: string };

const MAINLAND = /^1[3-9]\d{9}$/;
const DIGITS = /^\d+$/;
// Full-width forms (digits, ＋, －, （）, ．, Ｅ) are what Chinese input methods type.
const FULL_WIDTH = /[\uFF01-\uFF5E]/g;
// Spaces (incl. NBSP and the ideographic space, both \s in JS), - ( ): layout only.
const SEPARATORS = /[\s\-()]/g;
// Invisible characters pasted from web pages and chat apps (zero-width space, joiners, BOM).
const ZERO_WIDTH = /[\u200B-\u200D\u2060\uFEFF]/g;
// How spreadsheets are told "this is text": a leading apostrophe ('13800138000), or a formula
// that yields the text (="13800138000"), which CSV exports keep as written.
const TEXT_MARKS = /^'+|^="(.*)"$/;
const SCIENTIFIC = /^\+?\d+(\.\d+)?[eE][+-]?\d+$/;
const EXCEL_FLOAT = /^(\+?\d+)\.0+$/;

const REASONS = {
  empty: 'phone number is empty',
  scientific:
    'a spreadsheet turned this number into scientific notation (like 1.38E+10) and its digits are lost; format the column as text and export again',
  notDigits: 'phone number contains characters other than digits',
  notMobile: 'not a mainland China mobile number (11 digits starting 13 to 19)',
  internationalOff: 'international numbers are not enabled (allowInternational)',
  internationalLength: 'international number must have 6 to 15 digits after + or 00',
  internationalCode: 'international number has no country code (a 0 follows + or 00)',
} as const;

const fail = (reason: string): PhoneResult => ({ ok: false, reason });

function toHalfWidth(ch: string): string {
  return String.fromCharCode(ch.charCodeAt(0) - 0xfee0);
}

function mainland(national: string): PhoneResult {
  if (MAINLAND.test(national)) return { ok: true, phone: national };
  return fail(DIGITS.test(national) ? REASONS.notMobile : REASONS.notDigits);
}

/** digits: what follows + or 00, country code first. */
function withCountryCode(digits: string, allowInternational: boolean): PhoneResult {
  if (!DIGITS.test(digits)) return fail(REASONS.notDigits);
  // +86 is home: the rest must be a mainland mobile whatever allowInternational says.
  if (digits.startsWith('86')) return mainland(digits.slice(2));
  if (!allowInternational) return fail(REASONS.internationalOff);
  if (digits.length < 6 || digits.length > 15) return fail(REASONS.internationalLength);
  if (digits.startsWith('0')) return fail(REASONS.internationalCode);
  return { ok: true, phone: '00' + digits };
}

/** Normalises one phone cell; the reason of a failure is short English for the report. */
export function normalisePhone(raw: string, allowInternational: boolean): PhoneResult {
  if (MAINLAND.test(raw)) return { ok: true, phone: raw };
  let s = raw
    .replace(FULL_WIDTH, toHalfWidth)
    .replace(ZERO_WIDTH, '')
    .trim()
    .replace(TEXT_MARKS, '$1')
    .replace(SEPARATORS, '');
  if (s === '') return fail(REASONS.empty);
  if (SCIENTIFIC.test(s)) return fail(REASONS.scientific);
  s = s.replace(EXCEL_FLOAT, '$1');
  if (s.startsWith('+')) return withCountryCode(s.slice(1), allowInternational);
  if (s.startsWith('00')) return withCountryCode(s.slice(2), allowInternational);
  if (s.length === 13 && s.startsWith('86')) return mainland(s.slice(2));
  return mainland(s);
}
