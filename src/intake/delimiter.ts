// Which character separates the cells of a file: a comma, or a tab (Excel's "Text (Tab
// delimited)" and "Unicode Text" exports, and lists copied out of a spreadsheet). The header
// says it: among the rows where intake looks for it, the first that names a phone column when
// split at commas or at tabs gives the separator. A file where no row does is read with the one
// its name says (.tsv and .txt: tabs; anything else: commas), and refused for its header as any.
// Only the start of the file is read, so a file of any size costs one small read here.
import { open } from 'node:fs/promises';
import { unguardCell } from '../csvio/guard.js';
import { FileRefusedError } from './errors.js';
import { mapHeader, TITLE_ROWS_AT_MOST } from './headers.js';

export type Delimiter = ',' | '\t';

/** Bytes read to find the header: its rows are a few hundred bytes at most. */
const PEEK_BYTES = 64 * 1024;
const TAB_NAME = /\.(tsv|txt)$/i;

/** The separator of a file whose text is in `encoding` (a TextDecoder label). */
export async function delimiterOf(file: string, encoding: string): Promise<Delimiter> {
  const { text, whole } = await peek(file, encoding);
  const lines = text.split(/\r\n|\n|\r/);
  if (!whole) lines.pop(); // cut by the end of the read
  const rows = lines.filter((line) => /[^\s,]/.test(line)).slice(0, TITLE_ROWS_AT_MOST + 1);
  for (const row of rows) {
    const byComma = cellsNamingPhone(row, ',');
    const byTab = cellsNamingPhone(row, '\t');
    if (byComma || byTab) return byTab > byComma ? '\t' : ',';
  }
  return TAB_NAME.test(file) ? '\t' : ',';
}

async function peek(file: string, encoding: string): Promise<{ text: string; whole: boolean }> {
  const buffer = Buffer.alloc(PEEK_BYTES);
  const handle = await open(file, 'r');
  try {
    const { bytesRead } = await handle.read(buffer, 0, PEEK_BYTES, 0);
    const text = new TextDecoder(encoding).decode(buffer.subarray(0, bytesRead));
    return { text, whole: bytesRead < PEEK_BYTES };
  } finally {
    await handle.close();
  }
}

/**
 * How many cells a line has when split at `delimiter`, if one of them names a phone column; 0
 * otherwise. A header that names one but is refused for another reason (two phone columns) still
 * names one: its refusal is intake's to give.
 */
function cellsNamingPhone(line: string, delimiter: Delimiter): number {
  if (!line.includes(delimiter)) return 0;
  const cells = line.split(delimiter).map((cell) => unguardCell(unquoted(cell)));
  try {
    mapHeader(cells);
  } catch (err) {
    if (!(err instanceof FileRefusedError)) throw err;
    if (err.code === 'E_NO_PHONE_COLUMN') return 0;
  }
  return cells.length;
}

/** A header cell written in quotes ("phone"), as its text. */
function unquoted(cell: string): string {
  const trimmed = cell.trim();
  return trimmed.length >= 2 && trimmed.startsWith('"') && trimmed.endsWith('"')
    ? trimmed.slice(1, -1).replace(/""/g, '"')
    : cell;
}
