// Formula guard for every CSV the program writes (issue 5). Excel runs a cell that starts with
// = + - @ (or a tab / carriage return, which it strips first) as a formula, so such a cell is
// written with a leading apostrophe. The guard is exactly invertible: a cell that already starts
// with apostrophes followed by a formula character gets one more, so unguardCell can always take
// exactly one off. Intake unguards every cell it reads, so an exported CSV dropped back into the
// inbox sends the same text it was made from.

const NEEDS_GUARD = /^'*[=+\-@\t\r]/;
const IS_GUARDED = /^'+[=+\-@\t\r]/;
const APOSTROPHE = 39;

/** The text to write for a cell so a spreadsheet shows it as text, never as a formula. */
export function guardCell(s: string): string {
  return NEEDS_GUARD.test(s) ? "'" + s : s;
}

/** The inverse of guardCell: the text a guarded cell was made from (other text unchanged). */
export function unguardCell(s: string): string {
  // Fast path: almost no cell starts with an apostrophe, and this runs on every cell read.
  if (s.charCodeAt(0) !== APOSTROPHE) return s;
  return IS_GUARDED.test(s) ? s.slice(1) : s;
}
