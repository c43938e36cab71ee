// The names of the files smsdrop takes and the companion files it writes beside them: a dropped
// "a.csv" has its results in "a.result.csv", "a.rejected.csv"... in the same folder. Lists are
// taken as .csv, and as .tsv and .txt: what Excel names its tab-separated exports ("Text (Tab
// delimited)" and "Unicode Text" both save NAME.txt).

const LIST = /\.(csv|tsv|txt)$/i;

/** A name smsdrop reads as a list. */
export function isListName(name: string): boolean {
  return LIST.test(name);
}

/**
 * "a.csv" (or "a.tsv", "a.txt") -> "a": the stem every companion file is named after (other names
 * keep their extension).
 */
export function stemOf(name: string): string {
  return name.replace(LIST, '');
}

export const COMPANIONS = ['.result.csv', '.rejected.csv', '.error.txt', '.duplicate.txt'] as const;
