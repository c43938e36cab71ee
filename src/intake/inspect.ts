// First pass over a dropped file's bytes, streaming in constant memory: its fingerprint (sha256,
// size, so the journal can recognise a file it has seen) and its text encoding. Chinese Excel
// saves "CSV" in GB18030 unless told "CSV UTF-8", so: a UTF-8 BOM means UTF-8; bytes that are
// valid UTF-8 all the way through mean UTF-8; so do bytes that are UTF-8 but for a few stray
// bytes (mostlyUtf8: read as GB18030, every Chinese value of such a file would be sent garbled;
// read as UTF-8, only the cells with a stray byte hold U+FFFD, and those rows are refused);
// anything else is read as GB18030. But a file some of whose lines say UTF-8 and others GB18030
// (encodingParts.ts: two exports joined, or a BOM above GB18030 rows) is mixed, and refused.
import { isAscii, isUtf8 } from 'node:buffer';
import { createHash } from 'node:crypto';
import { open } from 'node:fs/promises';
import { type EncodingPart, lineClassifier } from './encodingParts.js';

export interface FileInspection {
  sha256: string;
  size: number;
  encoding: 'utf-8' | 'gb18030';
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
   * Set when lines of the file say UTF-8 and others GB18030 (two exports joined): read in either,
   * one part would be sent garbled, so intake refuses the file, naming the parts.
   */
  mixed?: { parts: EncodingPart[]; partCount: number };
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
        // The cut character alone (a read is not copied to be joined to it: 256 KB a read of
        // garbage outside the heap raised the peak memory by 30 MB).
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

/**
 * Hashes and measures the file and decides its encoding. Rejects with the fs error if unreadable.
 */
export async function inspectFile(file: string): Promise<FileInspection> {
  const hash = createHash('sha256');
  const utf8 = utf8Checker();
  let size = 0;
  let bom = false;
  let quoted = false;
  let ascii = true;
  let longestLine = 0;
  let lineSoFar = 0; // bytes of the line under way, from earlier reads
  for await (const chunk of readChunks(file)) {
    // The first read holds the first 3 bytes unless the file is shorter.
    if (size === 0) bom = startsWithBom(chunk);
    size += chunk.length;
    hash.update(chunk);
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
  if (ascii) return { sha256, size, encoding: 'utf-8', bom, quoted, longestLine };
  if (utf8.end()) {
    const encoding = !bom && (await gbkPassingAsUtf8(file)) ? 'gb18030' : 'utf-8';
    return { sha256, size, encoding, bom, quoted, longestLine };
  }
  return { sha256, size, bom, quoted, longestLine, ...(await notAllUtf8(file, bom)) };
}

/**
 * The encoding of a file that is not all valid UTF-8, from what its lines say (encodingParts.ts):
 * both encodings, and the file is mixed; one, and it is that one; neither (no line says), and
 * the file is UTF-8 after a BOM, UTF-8 with a few stray bytes, or else GB18030, as always.
 */
async function notAllUtf8(
  file: string,
  bom: boolean,
): Promise<Pick<FileInspection, 'encoding' | 'mixed'>> {
  const classifier = lineClassifier(bom);
  for await (const chunk of readChunks(file)) classifier.push(chunk);
  const { parts, partCount } = classifier.end();
  const first = parts[0];
  if (first === undefined)
    return { encoding: bom || (await mostlyUtf8(file)) ? 'utf-8' : 'gb18030' };
  if (partCount === 1) return { encoding: first.encoding };
  return { encoding: first.encoding, mixed: { parts, partCount } };
}

/**
 * Whether a file of valid UTF-8 is in fact GB18030 whose every pair of bytes happens to be valid
 * UTF-8 as well. Common characters are (元 reads as U+052A, 女士 as "Ůʿ"), so a Chinese Excel file
 * whose only Chinese is a unit in each row (128.00元), or a few names, passes the UTF-8 check, and
 * every such value would be sent garbled. Chinese in UTF-8 takes 3 bytes a character: a file with
 * one such sequence is UTF-8. One whose non-ASCII characters are all 2-byte sequences is GB18030
 * when every second byte is one GB2312 uses (0xA1 and up) and, read as UTF-8, one of its
 * characters is of no script a list would hold (IPA, modifier letters, combining marks alone,
 * Armenian, Syriac…: 元 reads as U+052A). Latin with accents, Greek, Cyrillic, Hebrew and Arabic
 * are such scripts (José, Dương, Иван stay UTF-8), though many GB2312 characters read as them
 * too (一 as һ): one character of the others decides, however many of these there are. Stops at
 * the first 3-byte sequence, so UTF-8 Chinese costs little.
 */
async function gbkPassingAsUtf8(file: string): Promise<boolean> {
  let lead = 0; // the first byte of a 2-byte sequence whose second byte is in the next read
  let unlikely = false;
  for await (const chunk of readChunks(file)) {
    for (let i = 0; i < chunk.length; i++) {
      const b = chunk[i]!;
      if (lead !== 0) {
        if (b < 0xa1) return false; // a GB2312 pair never ends so
        unlikely ||= !likelyScript(((lead & 0x1f) << 6) | (b & 0x3f));
        lead = 0;
      } else if (b >= 0xe0) {
        return false; // a 3- or 4-byte sequence: UTF-8
      } else if (b >= 0xc0) {
        lead = b;
      }
    }
  }
  return unlikely;
}

/**
 * Code points of 2-byte UTF-8 a list may well hold: Latin-1 and Latin Extended-A and B, Greek,
 * Cyrillic, Hebrew, Arabic.
 */
function likelyScript(codePoint: number): boolean {
  return (
    codePoint < 0x250 ||
    (codePoint >= 0x370 && codePoint < 0x500) ||
    (codePoint >= 0x590 && codePoint < 0x700)
  );
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
  return counts.valid >= UTF8_PER_STRAY * Math.max(counts.invalid, 1) && !(await isGb18030(file));
}

/** Whether every byte of the file is valid GB18030 (a fatal decoder, read after read). */
async function isGb18030(file: string): Promise<boolean> {
  const decoder = new TextDecoder('gb18030', { fatal: true });
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
 * heap, they waited for a collection long enough to raise the peak memory of a 32 MB file's
 * inspection by 30 MB.
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
