// A row's extras (the file's columns smsdrop does not send) as the journals store them: a JSON
// array of the row's cells, in the order of the names its file's header records (files.header's
// `extras`), so that the names are kept once per file rather than on every row. Trailing empty
// cells are left out. A journal's rows may also hold a JSON object by name (what intake wrote
// under the journals' earlier migrations): both read the same here and in v_recipients, which
// gives every row the object by name.

/** The stored text of a row's extra cells; null for a file without such columns. */
export function encodeExtras(cells: readonly string[]): string | null {
  if (cells.length === 0) return null;
  let end = cells.length;
  while (end > 0 && cells[end - 1] === '') end--;
  return JSON.stringify(end === cells.length ? cells : cells.slice(0, end));
}

/** A row's extras by name, from what the journal stores and its file's extra column names. */
export function extrasByName(
  stored: string | null,
  names: readonly string[],
): Record<string, string> {
  if (!stored) return {};
  const parsed = JSON.parse(stored) as string[] | Record<string, string>;
  if (!Array.isArray(parsed)) return parsed;
  return Object.fromEntries(names.map((name, i) => [name, parsed[i] ?? '']));
}
