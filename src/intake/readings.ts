// The two readings of a piece of a file that is valid UTF-8 and might be GB18030 all the same
// (Chinese Excel's plain "CSV"): many GB2312 characters are valid UTF-8 by their bytes (女士 is
// C5 AE CA BF, "Ůʿ" in UTF-8; 元 is U+052A), and many UTF-8 letters are GB2312 characters
// (Armenian Անի reads as 员斩斋, IPA ʤ as 胜). Each reading is judged on its own: is the GB18030
// one Chinese text, is the UTF-8 one text that a list may hold. inspect.ts decides from both, and
// refuses the file when both stay plausible (docs/input.md, "Encodings").
import { type EncodingPart, mixedEncodingRefusal } from './encodingParts.js';
import { FileRefusedError } from './errors.js';

/** What the GB18030 reading of a piece says. */
export interface GbReading {
  /** Every non-ASCII character is a GB2312 ideograph or Chinese punctuation, none inside a word. */
  chinese: boolean;
  /** GB2312 ideographs in it. */
  ideographs: number;
}

const isLowerAscii = (b: number | undefined): boolean => b !== undefined && b >= 0x61 && b <= 0x7a;

/**
 * Judges the GB18030 reading of bytes from the bytes: ideographs are GB2312's (lead 0xB0-0xF7,
 * trail 0xA1-0xFE), punctuation and full-width forms its rows 0xA1-0xA3. Anything else (the
 * GBK and GB18030 extensions, Greek, Cyrillic or kana of GB2312, a 4-byte sequence) is not the
 * Chinese of a list. Nor is an ideograph next to a small ASCII letter: accented European words
 * read so (José as Jos茅, Müller as M眉ller), while Chinese sits next to capitals (A座, VIP卡) if
 * next to any.
 */
export function readGb(bytes: Uint8Array): GbReading {
  let ideographs = 0;
  let afterIdeograph = false;
  for (let i = 0; i < bytes.length; i++) {
    const lead = bytes[i]!;
    if (lead < 0x80) {
      if (afterIdeograph && isLowerAscii(lead)) return { chinese: false, ideographs };
      afterIdeograph = false;
      continue;
    }
    const trail = bytes[++i];
    if (trail === undefined || trail < 0xa1 || trail > 0xfe) return { chinese: false, ideographs };
    if (lead >= 0xb0 && lead <= 0xf7) {
      if (isLowerAscii(bytes[i - 2])) return { chinese: false, ideographs };
      ideographs++;
      afterIdeograph = true;
    } else if (lead >= 0xa1 && lead <= 0xa3) {
      afterIdeograph = false;
    } else {
      return { chinese: false, ideographs };
    }
  }
  return { chinese: true, ideographs };
}

/**
 * Scripts a letter is told apart by. Letters of scripts not listed all count as one: a word mixing
 * two such is not caught, which only keeps its reading plausible.
 */
const SCRIPTS = [
  'Latin',
  'Greek',
  'Cyrillic',
  'Armenian',
  'Hebrew',
  'Arabic',
  'Syriac',
  'Thaana',
  'Nko',
  'Georgian',
  'Devanagari',
  'Bengali',
  'Tamil',
  'Thai',
  'Lao',
  'Tibetan',
  'Myanmar',
  'Khmer',
  'Ethiopic',
  'Hangul',
  'Han',
  'Hiragana',
  'Katakana',
  'Bopomofo',
  'Yi',
].map((name) => ({ name, re: new RegExp(`\\p{Script=${name}}`, 'u') }));

/** Scripts written together in one word: Japanese (kanji and kana), Korean with hanja. */
const WRITTEN_TOGETHER: Record<string, string> = {
  Hiragana: 'Han',
  Katakana: 'Han',
  Hangul: 'Han',
  Bopomofo: 'Han',
};

function scriptOf(letter: string): string {
  const found = SCRIPTS.find(({ re }) => re.test(letter))?.name ?? 'other';
  return WRITTEN_TOGETHER[found] ?? found;
}

/**
 * Letters of blocks that lists do not hold, though they are letters: archaic Greek and Coptic,
 * historic Cyrillic and the Cyrillic Supplement (元 reads as U+052A), Latin Extended-B but for
 * the letters of Vietnamese, pinyin, Romanian and the Croatian digraphs.
 */
function rareLetter(cp: number): boolean {
  if (cp >= 0x0180 && cp < 0x0250)
    return !(
      (cp >= 0x01a0 && cp <= 0x01b0) ||
      (cp >= 0x01c4 && cp <= 0x01dc) ||
      (cp >= 0x0218 && cp <= 0x021b)
    );
  return (
    (cp >= 0x0370 && cp < 0x0386) ||
    cp === 0x0387 ||
    (cp >= 0x03d0 && cp < 0x0400) ||
    (cp >= 0x0460 && cp < 0x048a) ||
    (cp >= 0x0500 && cp < 0x0530)
  );
}

/**
 * Whether ch cannot follow the letter `previous` in a word: Latin-1's punctuation and signs (¡, §,
 * ¤, ±…) and the modifier letters and combining marks of IPA and transliteration (ʹ, ˥, ̡) go
 * with Latin letters, if with any (л¡ and лʹ are 谢隆 and 谢使 read as UTF-8); ¡ and ¿ open a
 * sentence, so follow no letter.
 */
function strayAfter(previous: string, ch: string): boolean {
  const cp = ch.codePointAt(0)!;
  if (cp === 0xa1 || cp === 0xbf) return LETTER.test(previous);
  const latin1Sign =
    ((cp >= 0xa1 && cp < 0xc0) || cp === 0xd7 || cp === 0xf7) && (!LETTER.test(ch) || cp === 0xb5);
  if (!latin1Sign && !(cp >= 0x02b0 && cp < 0x0370)) return false;
  const before = previous.codePointAt(0)!;
  return LETTER.test(previous) && before >= 0x80 && !LATIN_OR_GREEK.test(previous);
}

/** Code points no text holds: unassigned, private use, surrogates, controls but tab and breaks. */
// eslint-disable-next-line no-control-regex -- control characters are what it looks for
const NOT_TEXT = /[\p{Cn}\p{Co}\p{Cs}\u0000-\u0008\u000B\u000C\u000E-\u001F\u007F-\u009F]/u;
const WORD_PART = /[\p{L}\p{M}\p{N}\p{Sk}]/u;
const LETTER = /\p{L}/u;
const MARK = /\p{M}/u;
const LOWER = /\p{Lowercase}/u;
const UPPER = /\p{Uppercase}/u;
const LATIN_OR_GREEK = /[\p{Script=Latin}\p{Script=Greek}]/u;
const COMMON = /[\p{Script=Common}\p{Script=Inherited}]/u;
/** Marks that follow a symbol (❤️: U+2764 U+FE0F), not a letter. */
const VARIATION_SELECTOR = /[\uFE00-\uFE0F\u{E0100}-\u{E01EF}]/u;

/**
 * Whether text read as UTF-8 is text a list may hold. Not when a character is no text, and not
 * when a word (a run of letters, marks, digits and modifiers) mixes scripts (ʷŮ), starts with a
 * combining mark (the Hebrew accent of 郑 read as UTF-8), has a capital right after a small
 * letter, or holds a letter of a block lists do not use (rareLetter).
 */
export function plausibleUtf8(text: string): boolean {
  if (NOT_TEXT.test(text)) return false;
  let script: string | undefined;
  let previous = ''; // the word's character before, '' at a word's start
  for (const ch of text) {
    if (previous && strayAfter(previous, ch)) return false;
    if (!WORD_PART.test(ch)) {
      script = undefined;
      previous = '';
      continue;
    }
    const cp = ch.codePointAt(0)!;
    if (cp >= 0x80) {
      if (MARK.test(ch) && !previous && !VARIATION_SELECTOR.test(ch)) return false;
      if (rareLetter(cp)) return false;
    }
    if (previous && UPPER.test(ch) && LOWER.test(previous)) return false;
    if (LETTER.test(ch) || MARK.test(ch)) {
      const own = cp < 0x80 ? 'Latin' : scriptOf(ch);
      // Modifier letters (ʿ, ˈ) are of every script.
      if (own !== 'other' || !COMMON.test(ch)) {
        if (script !== undefined && own !== script) return false;
        script = own;
      }
    }
    previous = ch;
  }
  return true;
}

/** A value whose two readings are shown when the file is refused as ambiguous. */
export interface TwoReadings {
  line: number;
  utf8: string;
  gb18030: string;
}

/** What a file's inspection (inspect.ts) found that refuses it for its encoding, if anything. */
export interface EncodingFindings {
  /**
   * Set when lines of the file say UTF-8 and others GB18030 (two exports joined): read in either,
   * one part would be sent garbled, so intake refuses the file, naming the parts.
   */
  mixed?: { parts: EncodingPart[]; partCount: number };
  /**
   * Set when the file is valid UTF-8 and both its readings, in UTF-8 and in GB18030, are
   * plausible: intake refuses it, showing both readings of this value.
   */
  ambiguous?: TwoReadings;
}

/** How a file of valid UTF-8 is to be read, or why neither reading can be chosen. */
export type ValidUtf8Verdict =
  { encoding: 'utf-8' | 'gb18030' } | { ambiguous: TwoReadings; ideographs: number };

/**
 * Ideographs the GB18030 reading of the file must hold in all to be clearly Chinese: one alone
 * (csv-spectrum's `ʤ` is 胜) is no more Chinese than the UTF-8 reading is anything.
 */
const CLEARLY_CHINESE = 2;
/** Bytes of a value judged, at most: a longer one is judged on its start. */
const VALUE_BYTES = 64 * 1024;
const COMMA = 0x2c;
const TAB = 0x09;
const QUOTE = 0x22;
const CR = 0x0d;
const LF = 0x0a;

/**
 * Judges a file of valid UTF-8 (without a BOM) value by value, as it is pushed read after read.
 * Values are the runs between commas, tabs, quotes and line breaks (none of which is ever part of a
 * character in either encoding). UTF-8 as soon as the GB18030 reading of one value is not Chinese
 * (any UTF-8 file with a few non-ASCII words: José reads as Jos茅); `push` then says it is
 * decided. At the end, every value's GB18030 reading is Chinese: GB18030 when some value's UTF-8
 * reading is not plausible and the ideographs are CLEARLY_CHINESE; UTF-8 when every UTF-8 reading
 * is plausible and they are not; ambiguous otherwise.
 */
export function validUtf8Judge(): { push(chunk: Buffer): boolean; end(): ValidUtf8Verdict } {
  const value = Buffer.allocUnsafe(VALUE_BYTES);
  let length = 0;
  let high = false;
  let line = 1;
  let afterCr = false;
  let decided = false;
  let ideographs = 0;
  let first: TwoReadings | undefined;
  let implausible: TwoReadings | undefined;

  const endValue = () => {
    if (!high || decided) return;
    const bytes = value.subarray(0, length);
    const gb = readGb(bytes);
    if (!gb.chinese) {
      decided = true;
      return;
    }
    ideographs += gb.ideographs;
    const utf8 = bytes.toString('utf8');
    const readings = { line, utf8, gb18030: new TextDecoder('gb18030').decode(bytes) };
    first ??= readings;
    if (!plausibleUtf8(utf8)) implausible ??= readings;
  };
  return {
    push(chunk) {
      for (let i = 0; i < chunk.length && !decided; i++) {
        const b = chunk[i]!;
        if (b === COMMA || b === TAB || b === QUOTE || b === CR || b === LF) {
          endValue();
          length = 0;
          high = false;
          if (b === LF && !afterCr) line++;
          if (b === CR) line++;
          afterCr = b === CR;
          continue;
        }
        afterCr = false;
        if (b >= 0x80) high = true;
        if (length < VALUE_BYTES) value[length++] = b;
      }
      return decided;
    },
    end() {
      endValue();
      if (decided) return { encoding: 'utf-8' };
      const clearlyChinese = ideographs >= CLEARLY_CHINESE;
      if (implausible)
        return clearlyChinese ? { encoding: 'gb18030' } : { ambiguous: implausible, ideographs };
      return clearlyChinese && first ? { ambiguous: first, ideographs } : { encoding: 'utf-8' };
    },
  };
}

/** The refusal of a file read plausibly both ways: both readings of a value, and the fixes. */
export function ambiguousEncodingRefusal(file: string, readings: TwoReadings): FileRefusedError {
  const why =
    `the file is valid UTF-8, and read as GB18030 (Chinese Excel's plain "CSV") it is Chinese text: line ${readings.line} holds "${readings.utf8}" in UTF-8 or "${readings.gb18030}" in GB18030, ` +
    'and either could be meant, so nothing is sent. Say which: save it as CSV UTF-8 (with a BOM), or name it NAME.utf8.csv or NAME.gb18030.csv, ' +
    'or set SMSDROP_ENCODING=utf8 or gb18030, and give it again';
  return new FileRefusedError('E_FILE_ENCODING_AMBIGUOUS', file, why);
}

/** Why intake refuses the file for its encoding (two encodings joined, or two readings), if so. */
export function encodingRefusal(
  file: string,
  inspection: EncodingFindings,
): FileRefusedError | undefined {
  if (inspection.mixed) return mixedEncodingRefusal(file, inspection.mixed);
  if (inspection.ambiguous) return ambiguousEncodingRefusal(file, inspection.ambiguous);
  return undefined;
}
