// Which encoding each line of a file that is not all UTF-8 reads as, to find a file that joins
// text of two encodings (a "CSV UTF-8" export and a Chinese Excel "CSV" export pasted together).
// Read whole in either encoding, one part would be sent garbled (张三 as 寮犱笁), so such a file
// is refused, naming the lines where each part starts (see docs/input.md for why a refusal and
// not a guess per line).
//
// One state machine over the bytes, line after line (a line break is never part of a UTF-8 or
// GB18030 character), in constant memory. A line counts only when its bytes say which encoding
// it is in; the rest (ASCII, or text that reads well both ways) is left out:
// - UTF-8: valid UTF-8 with a character of 3 or 4 bytes (Chinese takes 3), unless it is also
//   valid GB18030 made of GB2312 characters only. Chinese GB text can tile into valid UTF-8 by
//   chance (about 1 line in 10,000 of short names); it then still reads as plain GB2312, while
//   UTF-8 Chinese read as GB18030 almost always makes a pair outside GB2312 (a byte below 0xA1).
//   Also UTF-8 with a few stray bytes (many long sequences per invalid byte).
// - GB18030: not UTF-8, and valid GB18030.

import { FileRefusedError } from './errors.js';

export type LineEncoding = 'utf-8' | 'gb18030';

/** A run of lines whose bytes say the same encoding (lines that say nothing do not end it). */
export interface EncodingPart {
  encoding: LineEncoding;
  firstLine: number;
  /** The last line of the run whose bytes said so. */
  lastLine: number;
}

/** Parts kept to be named; the refusal counts the rest. */
const PARTS_KEPT = 6;
/**
 * As inspect.ts's mostlyUtf8: long sequences per invalid byte above which a line is UTF-8 with
 * stray bytes.
 */
const UTF8_PER_STRAY = 4;
const CR = 0x0d;
const LF = 0x0a;

export interface LineClassifier {
  push(chunk: Buffer): void;
  /**
   * The parts, in file order (at most PARTS_KEPT of them), how many there were in all, and whether
   * every line is valid GB18030.
   */
  end(): { parts: EncodingPart[]; partCount: number; allGb18030: boolean };
}

/** `bom`: the file starts with a UTF-8 BOM, which says UTF-8 for line 1. */
export function lineClassifier(bom: boolean): LineClassifier {
  const parts: EncodingPart[] = [];
  let partCount = 0;
  let line = 1;
  let afterCr = false;
  let allGb18030 = true;
  const state = freshLine();

  let lastEncoding: LineEncoding | undefined;
  const note = (encoding: LineEncoding) => {
    if (encoding !== lastEncoding) {
      lastEncoding = encoding;
      partCount++;
      if (parts.length < PARTS_KEPT) parts.push({ encoding, firstLine: line, lastLine: line });
    }
    if (parts.length === partCount) parts.at(-1)!.lastLine = line;
  };
  const endLine = () => {
    if (!state.gbValid || state.gbStep !== 0) allGb18030 = false;
    const encoding = classify(state);
    if (encoding) note(encoding);
    resetLine(state);
    line++;
  };
  if (bom) note('utf-8');

  return {
    push(chunk) {
      for (let i = 0; i < chunk.length; i++) {
        const b = chunk[i]!;
        // Most bytes of a list are ASCII between characters (numbers, commas): nothing to step.
        if (b > CR && b < 0x80 && state.need === 0 && state.gbStep === 0) continue;
        if (b === LF) {
          if (!afterCr) endLine();
          afterCr = false;
        } else if (b === CR) {
          endLine(); // CR LF, lone CR and lone LF each end one line, as intake counts them
          afterCr = true;
        } else {
          afterCr = false;
          if (b >= 0x80) state.high = true;
          stepUtf8(state, b);
          stepGb(state, b);
        }
      }
    },
    end() {
      if (state.high) endLine();
      return { parts, partCount, allGb18030 };
    },
  };
}

interface LineState {
  high: boolean; // a byte of 0x80 or more
  // UTF-8 (lenient: lead and continuation bytes only)
  need: number;
  long: boolean;
  longSeqs: number;
  invalid: number;
  // GB18030
  // 0: a new character; 1: after a lead; 2: after lead and digit; 3: after lead, digit, lead
  gbStep: number;
  gbLead: number;
  gbValid: boolean;
  outsideGb2312: boolean;
}

function freshLine(): LineState {
  return {
    high: false,
    need: 0,
    long: false,
    longSeqs: 0,
    invalid: 0,
    gbStep: 0,
    gbLead: 0,
    gbValid: true,
    outsideGb2312: false,
  };
}

function resetLine(s: LineState): void {
  Object.assign(s, freshLine());
}

function stepUtf8(s: LineState, b: number): void {
  if (s.need > 0) {
    if ((b & 0xc0) === 0x80) {
      if (--s.need === 0 && s.long) s.longSeqs++;
      return;
    }
    s.invalid++; // cut short: this byte starts afresh
    s.need = 0;
  }
  if (b < 0x80) return;
  if (b >= 0xc2 && b <= 0xdf) s.need = 1;
  else if (b >= 0xe0 && b <= 0xef) s.need = 2;
  else if (b >= 0xf0 && b <= 0xf4) s.need = 3;
  else s.invalid++;
  s.long = s.need >= 2;
}

/** GB18030: ASCII; lead 81-FE then trail 40-7E/80-FE; or lead, digit 30-39, lead, digit. */
function stepGb(s: LineState, b: number): void {
  if (!s.gbValid) return;
  switch (s.gbStep) {
    case 0:
      if (b >= 0x81 && b <= 0xfe) {
        s.gbStep = 1;
        s.gbLead = b;
      } else if (b >= 0x80) s.gbValid = false;
      return;
    case 1:
      if (b >= 0x30 && b <= 0x39) s.gbStep = 2;
      else if ((b >= 0x40 && b <= 0x7e) || (b >= 0x80 && b <= 0xfe)) {
        s.gbStep = 0;
        if (s.gbLead < 0xa1 || b < 0xa1) s.outsideGb2312 = true;
      } else s.gbValid = false;
      return;
    case 2:
      s.outsideGb2312 = true;
      if (b >= 0x81 && b <= 0xfe) s.gbStep = 3;
      else s.gbValid = false;
      return;
    default:
      if (b >= 0x30 && b <= 0x39) s.gbStep = 0;
      else s.gbValid = false;
  }
}

function classify(s: LineState): LineEncoding | undefined {
  if (!s.high) return undefined;
  const utf8Invalid = s.invalid + (s.need > 0 ? 1 : 0);
  const gbValid = s.gbValid && s.gbStep === 0;
  if (utf8Invalid === 0)
    return s.longSeqs > 0 && (!gbValid || s.outsideGb2312) ? 'utf-8' : undefined;
  if (s.longSeqs >= UTF8_PER_STRAY * utf8Invalid) return 'utf-8';
  return gbValid ? 'gb18030' : undefined;
}

/** "UTF-8 at lines 1-11, GB18030 at lines 12-21": the parts of a file of two encodings. */
export function describeParts(parts: readonly EncodingPart[], partCount: number): string {
  const named = parts.map(
    (p) =>
      `${p.encoding === 'utf-8' ? 'UTF-8' : 'GB18030'} ${p.firstLine === p.lastLine ? `at line ${p.firstLine}` : `from line ${p.firstLine} to ${p.lastLine}`}`,
  );
  const more = partCount > parts.length ? `, and ${partCount - parts.length} more part(s)` : '';
  return named.join(', ') + more;
}

/** The refusal of a file whose lines are in two encodings: where each part starts, and the fix. */
export function mixedEncodingRefusal(
  file: string,
  mixed: { parts: readonly EncodingPart[]; partCount: number },
): FileRefusedError {
  const why =
    `the file joins text in two encodings: ${describeParts(mixed.parts, mixed.partCount)}; ` +
    'read in either, the other part would be sent garbled, so nothing is sent. Open it in Excel (or an editor), save it again as CSV UTF-8 and drop it again ' +
    '(or re-export the lists the same way before joining them)';
  return new FileRefusedError('E_FILE_MIXED_ENCODING', file, why);
}
