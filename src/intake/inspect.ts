// First pass over a dropped file's bytes, streaming in constant memory: its fingerprint (sha256,
// size, so the journal can recognise a file it has seen) and its text encoding. Chinese Excel
// saves "CSV" in GB18030 unless told "CSV UTF-8", so: a UTF-8 BOM means UTF-8; bytes that are
// valid UTF-8 all the way through mean UTF-8 unless they read clearly as Chinese in GB18030 and
// implausibly in UTF-8 (readings.ts), and a file both readings of which stay plausible is
// refused; a file's name (NAME.gb18030.csv) or SMSDROP_ENCODING settles it. Bytes that are UTF-8
// but for a few stray bytes mean UTF-8 too (mostlyUtf8: read as GB18030, every Chinese value of
// such a file would be sent garbled; read as UTF-8, only the cells with a stray byte hold U+FFFD,
// and those rows are refused); anything else is read as GB18030. But a file some of whose lines
// say UTF-8 and others GB18030 (encodingParts.ts: two exports joined, or a BOM above GB18030
// rows) is mixed, and refused. A UTF-16 byte order mark (Excel's "Unicode Text") says UTF-16.
// Last, the header says which character separates the cells (delimiter.ts).
import { isAscii, isUtf8 } from 'node:buffer';
import { createHash } from 'node:crypto';
import { open } from 'node:fs/promises';
import { type Delimiter, delimiterOf } from './delimiter.js';
import { lineClassifier } from './encodingParts.js';
import { type EncodingFindings, validUtf8Judge } from './readings.js';
import { type Utf16, utf16ByMark, utf16Measures } from './utf16.js';

/** The encodings a file is read in. */
export type FileEncoding = 'utf-8' | 'gb18030' | Utf16;

export interface FileInspection extends EncodingFindings {
  sha256: string;
  size: number;
  encoding: FileEncoding;
  /** Cells are separated by commas, or by tabs (the header says which: delimiter.ts). */
  delimiter: Delimiter;
  /** The file starts with a UTF-8 BOM. */
  bom: boolean;
  /**
   * Bytes of the longest line (between line feeds): a line past intake's record limit refuses the
   * file.
   */
  longestLine: number;
  /**
   * Whether a double quote occurs anywhere. Without one, csv-parse (with intake's options) cannot
   * fail partway through the file, so sending may start before the last row is read.
   * (0x22 is never part of a multi-byte character in UTF-8 or GB18030.)
   */
  quoted: boolean;
  /**
   * Every byte is text in the encoding, so a U+FFFD read from it is text the file holds, not the
   * mark of a byte that is not text.
   */
  exact: boolean;
}

const QUOTE = 0x22;
const LF = 0x0a;
const READ_SIZE = 256 * 1024;

const UTF8_BOM = [0xef, 0xbb, 0xbf] as const;

function startsWithBom(chunk: Buffer): boolean {
  return (
    chunk.length >= 3 &&
    chunk[0] === UTF8_BOM[0] &&
    chunk[1] === UTF8_BOM[1] &&
    chunk[2] === UTF8_BOM[2]
  );
}

/**
 * Strict streaming UTF-8 check: false from the first invalid byte sequence on. Each read is
 * checked by Buffer's native isUtf8 (a fatal TextDecoder made a string of every read only to
 * throw it away: 6 times the time of the SHA-256), up to the last whole character; the bytes of a
 * character cut by the end of the read are checked with the next read.
 */
export function utf8Checker(): { push(chunk: Buffer): void; end(): boolean } {
  let valid = true;
  let carry: Buffer | undefined;
  return {
    push(chunk) {
      if (!valid) return;
      let from = 0;
      if (carry) {
        // The cut character alone (a read is not copied to be joined to it: a copy per read is
        // garbage outside the heap, which raises the peak memory).
        from = sequenceLength(carry[0]!) - carry.length;
        if (chunk.length < from) {
          carry = Buffer.concat([carry, chunk]);
          return;
        }
        valid = isUtf8(Buffer.concat([carry, chunk.subarray(0, from)]));
        carry = undefined;
        if (!valid) return;
      }
      const rest = chunk.subarray(from);
      const whole = wholeCharacters(rest);
      valid = isUtf8(rest.subarray(0, whole));
      carry = whole < rest.length ? Buffer.from(rest.subarray(whole)) : undefined;
    },
    // A multi-byte character cut off by the end of the file is not UTF-8.
    end: () => valid && carry === undefined,
  };
}

/** Bytes in a UTF-8 sequence that starts with `lead` (an invalid lead byte is left to isUtf8). */
function sequenceLength(lead: number): number {
  return lead >= 0xf0 ? 4 : lead >= 0xe0 ? 3 : lead >= 0xc0 ? 2 : 1;
}

/** The length of bytes without a last character whose sequence goes on past the end. */
export function wholeCharacters(bytes: Buffer): number {
  let start = bytes.length - 1;
  // Back over at most 3 continuation bytes (10xxxxxx) to the first byte of the last character.
  while (start >= 0 && bytes.length - start <= 3 && (bytes[start]! & 0xc0) === 0x80) start--;
  if (start < 0) return bytes.length; // nothing but continuation bytes: isUtf8 says no
  return bytes.length - start < sequenceLength(bytes[start]!) ? start : bytes.length;
}

/** An encoding the user named for a file: a setting (SMSDROP_ENCODING) or the file's name. */
export type ToldEncoding = 'utf-8' | 'gb18030';
/** SMSDROP_ENCODING: auto, or the encoding of files whose BOM and name say none. */
export type EncodingSetting = 'auto' | ToldEncoding;

/** `NAME.utf8.csv`, `NAME.gb18030.csv` (or .gbk., .gb2312.): the name says the encoding. */
const NAMED_ENCODING = /\.(utf-?8|gb18030|gbk|gb2312)\.[^./\\]+$/i;

/** The encoding a file's name gives, if any. */
export function encodingInName(file: string): ToldEncoding | undefined {
  const named = NAMED_ENCODING.exec(file)?.[1]?.toLowerCase();
  if (named === undefined) return undefined;
  return named.startsWith('utf') ? 'utf-8' : 'gb18030';
}

type Measures = Omit<FileInspection, 'encoding' | 'delimiter' | 'exact' | 'mixed' | 'ambiguous'> & {
  ascii: boolean;
  validUtf8: boolean;
  /** The encoding of a UTF-16 byte order mark at the start. */
  utf16: Utf16 | undefined;
};

/**
 * Hashes and measures the file and decides its encoding. Rejects with the fs error if unreadable.
 * `setting`: SMSDROP_ENCODING; a BOM, then the file's name, say more than it.
 */
export async function inspectFile(
  file: string,
  setting: EncodingSetting = 'auto',
): Promise<FileInspection> {
  const read = await readingOf(file, setting);
  return { ...read, delimiter: await delimiterOf(file, read.encoding) };
}

/** The file's measures and the encoding it is read in (or why it cannot be read in one). */
async function readingOf(
  file: string,
  setting: EncodingSetting,
): Promise<Omit<FileInspection, 'delimiter'>> {
  const { ascii, validUtf8, utf16, ...measures } = await measure(file);
  if (utf16) return { ...measures, encoding: utf16, exact: await decodesExactly(file, utf16) };
  if (ascii) return { ...measures, encoding: 'utf-8', exact: true };
  const named = measures.bom
    ? undefined
    : (encodingInName(file) ?? (setting === 'auto' ? undefined : setting));
  if (named === 'utf-8') return { ...measures, encoding: named, exact: validUtf8 };
  if (named === 'gb18030')
    return { ...measures, encoding: named, exact: await decodesExactly(file, named) };
  if (validUtf8 && measures.bom) return { ...measures, encoding: 'utf-8', exact: true };
  if (validUtf8) return { ...measures, ...(await judgeValidUtf8(file)) };
  return { ...measures, ...(await notAllUtf8(file, measures.bom)) };
}

/** Fingerprint, size, lines and quotes of the file, and whether it is ASCII, or valid UTF-8. */
async function measure(file: string): Promise<Measures> {
  const hash = createHash('sha256');
  const utf8 = utf8Checker();
  let size = 0;
  let bom = false;
  let quoted = false;
  let ascii = true;
  let longestLine = 0;
  let lineSoFar = 0; // bytes of the line under way, from earlier reads
  let utf16: ReturnType<typeof utf16Measures> | undefined;
  let utf16Encoding: Utf16 | undefined;
  for await (const chunk of readChunks(file)) {
    // The first read holds the first 3 bytes unless the file is shorter.
    if (size === 0) {
      bom = startsWithBom(chunk);
      utf16Encoding = utf16ByMark(chunk);
      utf16 = utf16Encoding && utf16Measures(utf16Encoding);
    }
    size += chunk.length;
    hash.update(chunk);
    if (utf16) {
      utf16.push(chunk);
      continue;
    }
    utf8.push(chunk); // after a BOM too: a UTF-8 export with a GB18030 one pasted under it has one
    if (ascii) ascii = isAscii(chunk);
    if (!quoted) quoted = chunk.includes(QUOTE);
    for (let from = 0; ;) {
      const lf = chunk.indexOf(LF, from);
      if (lf === -1) {
        lineSoFar += chunk.length - from;
        break;
      }
      longestLine = Math.max(longestLine, lineSoFar + lf - from);
      lineSoFar = 0;
      from = lf + 1;
    }
  }
  longestLine = Math.max(longestLine, lineSoFar);
  const sha256 = hash.digest('hex');
  const text = utf16 ? { ...utf16.end(), ascii: false } : { quoted, longestLine, ascii };
  return { sha256, size, bom, ...text, validUtf8: utf8.end(), utf16: utf16Encoding };
}

/**
 * A file of valid UTF-8 without a BOM is UTF-8 unless its GB18030 reading is clearly Chinese and
 * its UTF-8 reading is not plausible (readings.ts); when both stay plausible, it is ambiguous.
 */
async function judgeValidUtf8(
  file: string,
): Promise<Pick<FileInspection, 'encoding' | 'exact' | 'ambiguous'>> {
  const judge = validUtf8Judge();
  for await (const chunk of readChunks(file)) if (judge.push(chunk)) break;
  const verdict = judge.end();
  if ('encoding' in verdict) return { encoding: verdict.encoding, exact: true };
  return { encoding: 'utf-8', exact: true, ambiguous: verdict.ambiguous };
}

/**
 * The encoding of a file that is not all valid UTF-8, from what its lines say (encodingParts.ts):
 * both encodings, and the file is mixed; one, and it is that one; neither (no line says), and
 * the file is UTF-8 after a BOM, UTF-8 with a few stray bytes, or else GB18030, as always.
 */
async function notAllUtf8(
  file: string,
  bom: boolean,
): Promise<Pick<FileInspection, 'encoding' | 'exact' | 'mixed'>> {
  const classifier = lineClassifier(bom);
  for await (const chunk of readChunks(file)) classifier.push(chunk);
  const { parts, partCount, allGb18030 } = classifier.end();
  const first = parts[0];
  const encoding = first?.encoding ?? (bom || (await mostlyUtf8(file)) ? 'utf-8' : 'gb18030');
  // Not valid UTF-8: read as UTF-8, its stray bytes become U+FFFD.
  const exact = encoding === 'gb18030' && allGb18030;
  if (first === undefined || partCount === 1) return { encoding, exact };
  return { encoding, exact, mixed: { parts, partCount } };
}

/**
 * Valid 3- and 4-byte UTF-8 sequences (where Chinese characters live) per invalid byte above which
 * bytes that are not all UTF-8 may still be UTF-8. GB18030 text read as UTF-8 makes far fewer: a
 * few runs of its bytes form such sequences by chance. 2-byte sequences are no evidence: many
 * common GB2312 characters (女, 士, 证...) are valid 2-byte UTF-8 by themselves.
 */
const UTF8_PER_STRAY = 4;
/** GB18030 shows itself within the first few kilobytes: the count stops there. */
const ENOUGH_INVALID = 1000;

/**
 * A second pass, for a file that is not valid UTF-8: is it UTF-8 with a few stray bytes? Only if
 * its long UTF-8 sequences far outnumber its invalid bytes, and it is not valid GB18030 either
 * (UTF-8 text with a stray byte almost never is: its 3-byte characters split GB18030's pairs).
 */
async function mostlyUtf8(file: string): Promise<boolean> {
  const counts = { valid: 0, invalid: 0 };
  let need = 0; // continuation bytes the current sequence still needs
  for await (const chunk of readChunks(file)) {
    need = countSequences(chunk, need, counts);
    if (counts.invalid >= ENOUGH_INVALID && counts.valid < UTF8_PER_STRAY * counts.invalid)
      return false;
  }
  if (need > 0) counts.invalid++;
  return (
    counts.valid >= UTF8_PER_STRAY * Math.max(counts.invalid, 1) &&
    !(await decodesExactly(file, 'gb18030'))
  );
}

/**
 * Whether every byte of the file is text in `encoding` (a fatal decoder, read after read): for
 * UTF-16, no surrogate left unpaired and no byte left over.
 */
async function decodesExactly(file: string, encoding: 'gb18030' | Utf16): Promise<boolean> {
  const decoder = new TextDecoder(encoding, { fatal: true });
  try {
    for await (const chunk of readChunks(file)) decoder.decode(chunk, { stream: true });
    decoder.decode();
    return true;
  } catch {
    return false;
  }
}

/**
 * Counts whole 3- and 4-byte sequences and invalid bytes (a lenient check: lead and continuation
 * bytes only); returns the continuation bytes still needed. A sequence cut by the end of a read is
 * not counted (a few a file, and only ever towards GB18030).
 */
function countSequences(
  bytes: Buffer,
  need: number,
  counts: { valid: number; invalid: number },
): number {
  let long = false; // the sequence under way is of 3 or 4 bytes
  for (let i = 0; i < bytes.length; i++) {
    const b = bytes[i]!;
    if (need > 0) {
      if ((b & 0xc0) === 0x80) {
        if (--need === 0 && long) counts.valid++;
        continue;
      }
      counts.invalid++; // cut short: this byte starts afresh
      need = 0;
    }
    if (b < 0x80) continue;
    if (b >= 0xc2 && b <= 0xdf) need = 1;
    else if (b >= 0xe0 && b <= 0xef) need = 2;
    else if (b >= 0xf0 && b <= 0xf4) need = 3;
    else counts.invalid++;
    long = need >= 2;
  }
  return need;
}

/**
 * The file's first `limit` bytes (all of them by default), read after read into one buffer: each
 * chunk is valid until the next one is asked for. A read stream makes a new 256 KB Buffer for
 * every read, outside the JS heap; hashed and checked by isUtf8, which make no garbage on the
 * heap, they wait for a collection long enough to raise the peak memory of an inspection.
 */
async function* readChunks(file: string, limit = Number.POSITIVE_INFINITY): AsyncGenerator<Buffer> {
  const handle = await open(file, 'r');
  try {
    const buffer = Buffer.allocUnsafe(READ_SIZE);
    for (let position = 0; position < limit;) {
      const { bytesRead } = await handle.read(
        buffer,
        0,
        Math.min(READ_SIZE, limit - position),
        position,
      );
      if (bytesRead === 0) return;
      position += bytesRead;
      yield buffer.subarray(0, bytesRead);
    }
  } finally {
    await handle.close();
  }
}

/**
 * SHA-256 of the first `bytes` bytes of file (to recognise a file that grew from one seen before).
 */
export async function hashPrefix(file: string, bytes: number): Promise<string> {
  const hash = createHash('sha256');
  for await (const chunk of readChunks(file, bytes)) hash.update(chunk);
  return hash.digest('hex');
}
