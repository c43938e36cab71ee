// A quoted empty value ("") is a value: a row ending `"a",""` gives its template two values, while
// a row ending `a,` gives one (trailing empty cells are dropped, so one file can mix templates).
// csv-parse hands over both as '', and asking it which cells were quoted (its cast context) made
// parsing 7 times slower. So the text is marked before it is parsed: each "" that is a whole cell
// becomes "QUOTED_EMPTY", which row.ts reads as an empty value that is kept. The scan follows
// csv-parse's rules with intake's options (relax_quotes), as quotes.ts does, but jumps from quote
// to quote; it runs only on files that hold a double quote.
import { Transform } from 'node:stream';

/** What a quoted empty cell reads as, until row.ts takes it for an empty value. */
export const QUOTED_EMPTY = '\uFDD0\uFDEF';

const QUOTE = 0x22;
const LF = 0x0a;
const CR = 0x0d;

/**
 * Text to text: each quoted empty cell ("") becomes "QUOTED_EMPTY". A chunk's last two characters
 * wait for the next chunk when a quote is among them (what follows it decides). `delimiter`: what
 * separates cells.
 */
export function markQuotedEmpty(delimiter: string = ','): Transform {
  const separator = delimiter.charCodeAt(0);
  const ends = (ch: number): boolean => ch === separator || ch === LF || ch === CR;
  let quoted = false; // inside a quoted value
  let previous = LF; // the character before the text to come (a line start at first)
  let held = '';
  const scan = (text: string, end: boolean): string => {
    let out = '';
    let from = 0; // text before it is in out
    let i = 0;
    for (;;) {
      const q = text.indexOf('"', i);
      if (q === -1) break;
      // What follows the quote is not known yet: hold it back for the next chunk.
      if (!end && q + 2 >= text.length) {
        held = text.slice(q);
        text = text.slice(0, q);
        break;
      }
      const next = q + 1 < text.length ? text.charCodeAt(q + 1) : -1;
      if (quoted) {
        if (next === QUOTE)
          i = q + 2; // "" inside a value: a quote
        else {
          if (next === -1 || ends(next)) quoted = false;
          i = q + 1;
        }
        continue;
      }
      const before = q > 0 ? text.charCodeAt(q - 1) : previous;
      if (!ends(before)) {
        i = q + 1; // a quote inside an unquoted value is text
        continue;
      }
      const after = q + 2 < text.length ? text.charCodeAt(q + 2) : -1;
      if (next === QUOTE && (after === -1 || ends(after))) {
        out += `${text.slice(from, q)}"${QUOTED_EMPTY}"`;
        from = i = q + 2;
        continue;
      }
      quoted = true;
      i = q + 1;
    }
    if (text.length > 0) previous = text.charCodeAt(text.length - 1);
    return out + text.slice(from);
  };
  return new Transform({
    decodeStrings: false,
    transform(chunk: string, _encoding, done) {
      const text = held + chunk;
      held = '';
      done(null, scan(text, false));
    },
    flush(done) {
      const text = held;
      held = '';
      done(null, scan(text, true));
    },
  });
}
