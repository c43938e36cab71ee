// UTF-16 text, as Excel writes it for "Unicode Text" (little-endian, with a byte order mark, cells
// separated by tabs): the mark says the encoding, and nothing else is guessed. The bytes of a
// character can be those of a quote or a line feed (上 is 0A 4E in UTF-16LE), so what inspect.ts
// measures on other files byte by byte is measured here code unit by code unit.

export type Utf16 = 'utf-16le' | 'utf-16be';

/** The encoding a UTF-16 byte order mark at the start of `head` says, if there is one. */
export function utf16ByMark(head: Uint8Array): Utf16 | undefined {
  if (head.length < 2) return undefined;
  if (head[0] === 0xff && head[1] === 0xfe) return 'utf-16le';
  if (head[0] === 0xfe && head[1] === 0xff) return 'utf-16be';
  return undefined;
}

const QUOTE = 0x22;
const LF = 0x0a;

/**
 * Whether a double quote occurs, and the bytes of the longest line (between line feeds), of UTF-16
 * text pushed read after read.
 */
export function utf16Measures(encoding: Utf16): {
  push(chunk: Buffer): void;
  end(): { quoted: boolean; longestLine: number };
} {
  const little = encoding === 'utf-16le';
  let cut: number | undefined; // the first byte of a code unit the end of a read cut in two
  let quoted = false;
  let longestLine = 0;
  let lineSoFar = 0;
  const step = (first: number, second: number) => {
    const unit = little ? first | (second << 8) : (first << 8) | second;
    if (unit === QUOTE) quoted = true;
    if (unit === LF) {
      longestLine = Math.max(longestLine, lineSoFar);
      lineSoFar = 0;
    } else lineSoFar += 2;
  };
  return {
    push(chunk) {
      let i = 0;
      if (cut !== undefined && chunk.length > 0) {
        step(cut, chunk[0]!);
        cut = undefined;
        i = 1;
      }
      for (; i + 1 < chunk.length; i += 2) step(chunk[i]!, chunk[i + 1]!);
      if (i < chunk.length) cut = chunk[i];
    },
    end: () => ({ quoted, longestLine: Math.max(longestLine, lineSoFar) }),
  };
}
