// Text for a terminal of a given width, counted as a terminal counts it (two columns for a wide CJK
// character): prose wrapped at spaces, cells cut with "…", and plain tables (no borders: they are
// often pasted) whose one flexible column takes what the others leave.

/** Columns between two cells of a plain table. */
const GAP = '  ';

/**
 * Columns a terminal gives `text`: two for a wide (CJK, full-width) character, one for the others.
 */
export function columns(text: string): number {
  let n = 0;
  for (const ch of text) n += isWide(ch.codePointAt(0)!) ? 2 : 1;
  return n;
}

function isWide(cp: number): boolean {
  return (
    (cp >= 0x1100 && cp <= 0x115f) ||
    (cp >= 0x2e80 && cp <= 0xa4cf && cp !== 0x303f) ||
    (cp >= 0xac00 && cp <= 0xd7a3) ||
    (cp >= 0xf900 && cp <= 0xfaff) ||
    (cp >= 0xfe30 && cp <= 0xfe4f) ||
    (cp >= 0xff00 && cp <= 0xff60) ||
    (cp >= 0xffe0 && cp <= 0xffe6) ||
    (cp >= 0x20000 && cp <= 0x3fffd)
  );
}

/** `text` in at most `width` columns, its middle replaced by "…" when it is wider. */
export function cutMiddle(text: string, width: number): string {
  if (columns(text) <= width) return text;
  const chars = [...text];
  let head = '';
  let tail = '';
  let used = 1; // the "…"
  for (let i = 0, j = chars.length - 1; i <= j;) {
    const take = columns(head) <= columns(tail) ? chars[i]! : chars[j]!;
    if (used + columns(take) > width) break;
    used += columns(take);
    if (take === chars[i] && columns(head) <= columns(tail)) {
      head += take;
      i++;
    } else {
      tail = take + tail;
      j--;
    }
  }
  return `${head}…${tail}`;
}

/** `text` in at most `width` columns, its end replaced by "…" when it is wider. */
export function cutEnd(text: string, width: number): string {
  if (columns(text) <= width) return text;
  let head = '';
  for (const ch of text) {
    if (columns(head) + columns(ch) + 1 > width) break;
    head += ch;
  }
  return `${head}…`;
}

/** A command in prose (`smsdrop retry 4 --failed`): one piece to copy, never broken in two. */
const COMMAND = /smsdrop [a-z]+(?: (?:\d+|[A-Z]+|--[a-z-]+(?: [a-z]+(?:,[a-z]+)*)?))*/g;
const NO_BREAK = '\u00a0';

/**
 * `text` in lines of at most `width` columns, broken at spaces but never inside a command (a word
 * wider than a line is broken where it must); the lines after the first start with `indent`.
 */
export function wrap(text: string, width: number, indent = ''): string[] {
  const kept = text.replace(COMMAND, (command) => command.replaceAll(' ', NO_BREAK));
  return wrapWords(kept, width, indent).map((line) => line.replaceAll(NO_BREAK, ' '));
}

function wrapWords(text: string, width: number, indent: string): string[] {
  const lines: string[] = [];
  let line = '';
  for (const word of text.split(' ')) {
    const joined = line === '' ? word : `${line} ${word}`;
    if (columns(joined) <= width || line.trim() === '') line = joined;
    else {
      lines.push(line);
      line = `${indent}${word}`;
    }
    while (columns(line) > width) {
      const head = cutEnd(line, width + 1).slice(0, -1);
      lines.push(head);
      line = `${indent}${line.slice(head.length)}`;
    }
  }
  lines.push(line);
  return lines;
}

/** Fields ("rows 5", "accepted 1"…) two spaces apart, in as few lines of `width` as they fit. */
export function packFields(fields: readonly string[], width: number): string[] {
  const lines: string[] = [];
  for (const field of fields.filter((f) => f !== '')) {
    const last = lines.at(-1);
    if (last !== undefined && columns(`${last}${GAP}${field}`) <= width)
      lines[lines.length - 1] = `${last}${GAP}${field}`;
    else lines.push(field);
  }
  return lines;
}

export interface PlainTableLayout {
  /** The table's lines fit this many columns (but for a flexible column at its narrowest). */
  width: number;
  /** The column that is cut to fit, and how. */
  flexible: { column: number; cut: (text: string, width: number) => string; atLeast: number };
  /** Columns aligned right (counts). */
  right?: readonly number[];
}

/** A header, a line of dashes and the rows, each cell padded to its column. */
export function plainTable(
  head: readonly string[],
  rows: ReadonlyArray<readonly string[]>,
  layout: PlainTableLayout,
): string[] {
  const { column: flex, cut, atLeast } = layout.flexible;
  const widths = head.map((h, i) => Math.max(columns(h), ...rows.map((r) => columns(r[i]!))));
  const others =
    widths.reduce((sum, w, i) => (i === flex ? sum : sum + w), 0) + GAP.length * (head.length - 1);
  widths[flex] = Math.min(widths[flex]!, Math.max(atLeast, layout.width - others));
  const right = new Set(layout.right ?? []);
  const pad = (text: string, i: number) => {
    const room = ' '.repeat(widths[i]! - columns(text));
    return right.has(i) ? room + text : text + room;
  };
  const line = (cells: readonly string[]) =>
    cells
      .map((c, i) => pad(i === flex ? cut(c, widths[i]!) : c, i))
      .join(GAP)
      .trimEnd();
  return [line(head), line(widths.map((w) => '-'.repeat(w))), ...rows.map(line)];
}
