// Formula guard for every CSV the program writes. Excel runs a cell that starts with
// = + - @ (or a tab / carriage return, which it strips first) as a formula, so such a cell is
// written with a leading apostrophe. The guard is exactly invertible: a cell that already starts
// with apostrophes followed by a formula character gets one more, so unguardCell can always take
// exactly one off. Intake unguards every cell it reads, so an exported CSV dropped back into the
// inbox sends the same text it was made from.

const NEEDS_GUARD = /^'*[=+\-@\t\r]/;
const IS_GUARDED = /^'+[=+\-@\t\r]/;
const APOSTROPHE = 39;
const EQUALS = 61;

/**
 * Digits Excel would change on opening the file: a leading zero (a code 048213, an international
 * number 0044…) is dropped, and past 11 digits the number is shown as 4.40301E+17 and saved so,
 * its last digits lost beyond 15. Written as the formula ="048213", Excel shows the text as it is.
 */
const DIGITS_EXCEL_CHANGES = /^(?:0\d+|\d{12,})$/;
const DIGITS_AS_TEXT = /^="(\d+)"$/;

/**
 * A cell of digits Excel would change, as ="digits" (for files meant to be opened in Excel, fixed
 * and dropped back: exports, rejected rows); any other cell as guardCell writes it. The formula
 * guard never makes this form (it puts an apostrophe before "="), so unguardCell can read it back.
 */
export function guardDigits(s: string): string {
  return DIGITS_EXCEL_CHANGES.test(s) ? `="${s}"` : guardCell(s);
}

/** The text to write for a cell so a spreadsheet shows it as text, never as a formula. */
export function guardCell(s: string): string {
  return NEEDS_GUARD.test(s) ? "'" + s : s;
}

/** The inverse of guardCell: the text a guarded cell was made from (other text unchanged). */
export function unguardCell(s: string): string {
  // Fast path: almost no cell starts with an apostrophe or "=", and this runs on every cell read.
  const first = s.charCodeAt(0);
  if (first === EQUALS) return DIGITS_AS_TEXT.exec(s)?.[1] ?? s;
  if (first !== APOSTROPHE) return s;
  return IS_GUARDED.test(s) ? s.slice(1) : s;
}
