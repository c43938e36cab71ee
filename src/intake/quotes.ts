// Where a double quote that is never closed was opened. csv-parse says only that the parsing ended
// inside quotes, at a line it counts after the records it had already handed over (and counts a
// CRLF twice), so the refusal would point far from the quote. The file is read again here, only
// on that refusal, following csv-parse's rules with intake's options (relax_quotes): a quote opens
// a quoted value only at the start of a cell; inside one, "" is a quote, and a quote followed by a
// separator (a comma, or a tab) or a line break (or the end) closes it; any other quote is text.
import { createReadStream } from 'node:fs';
import type { IntakeOptions } from './row.js';

const QUOTE = 34;
const LF = 10;
const CR = 13;

/**
 * The line where the quote left open at the end of the file was opened, or undefined if none is.
 */
export async function openQuoteLine(
  file: string,
  { encoding, bytes, delimiter = ',' }: Pick<IntakeOptions, 'encoding' | 'bytes' | 'delimiter'>,
): Promise<number | undefined> {
  const decoder = new TextDecoder(encoding);
  const scan = quoteScanner(delimiter.charCodeAt(0));
  for await (const chunk of createReadStream(file, bytes ? { end: bytes - 1 } : {}))
    scan(decoder.decode(chunk as Buffer, { stream: true }));
  return scan(decoder.decode(), true);
}

/** Feeds text in pieces; the last call (end: true) returns the open quote's line, if any. */
function quoteScanner(separator: number): (text: string, end?: boolean) => number | undefined {
  let line = 1;
  let cellStart = true;
  let quoted = false;
  let openedAt = 0;
  /** A quote inside a quoted value whose next character is in the next piece. */
  let pendingQuote = false;
  let afterCr = false;

  const closesOn = (ch: number): boolean => ch === separator || ch === LF || ch === CR;
  return (text, end = false) => {
    let i = 0;
    if (pendingQuote && text.length > 0) {
      pendingQuote = false;
      const next = text.charCodeAt(0);
      if (next === QUOTE)
        i = 1; // "" : a quote in the value
      else if (closesOn(next)) quoted = false;
    }
    for (; i < text.length; i++) {
      const ch = text.charCodeAt(i);
      if (ch === LF && afterCr) {
        afterCr = false; // the LF of a CRLF: the line was counted at its CR
        continue;
      }
      afterCr = ch === CR;
      if (ch === LF || ch === CR) {
        line++;
        if (!quoted) cellStart = true;
        continue;
      }
      if (quoted) {
        if (ch !== QUOTE) continue;
        if (i + 1 === text.length) {
          pendingQuote = true;
          continue;
        }
        const next = text.charCodeAt(i + 1);
        if (next === QUOTE) i++;
        else if (closesOn(next)) quoted = false;
        continue;
      }
      if (ch === QUOTE && cellStart) {
        quoted = true;
        openedAt = line;
      }
      cellStart = ch === separator;
    }
    if (end && pendingQuote) quoted = false; // a quote at the very end closes the value
    return end && quoted ? openedAt : undefined;
  };
}
