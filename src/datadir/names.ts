// The names of the files smsdrop takes and the companion files it writes beside them: a dropped
// "a.csv" has its results in "a.result.csv", "a.rejected.csv"... in the same folder.

const CSV = /\.csv$/i;

export function isCsvName(name: string): boolean {
  return CSV.test(name);
}

/**
 * "a.csv" -> "a": the stem every companion file is named after (non-CSV names keep their
 * extension).
 */
export function stemOf(name: string): string {
  return name.replace(CSV, '');
}

export const COMPANIONS = ['.result.csv', '.rejected.csv', '.error.txt', '.duplicate.txt'] as const;
