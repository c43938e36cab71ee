// First pass over a dropped file's bytes, streaming in constant memory: its fingerprint (sha256,
// size, so the journal can recognise a file it has seen) and its text encoding. Chinese Excel
// saves "CSV" in GB18030 unless told "CSV UTF-8", so: a UTF-8 BOM means UTF-8; bytes that are
// valid UTF-8 all the way through mean UTF-8; anything else is read as GB18030.
import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';

export interface FileInspection {
  sha256: string;
  size: number;
  encoding: 'utf-8' | 'gb18030';
  bom: boolean;
  /**
   * Whether a double quote occurs anywhere. Without one, csv-parse (with intake's options) cannot
   * fail partway through the file, so sending may start before the last row is read.
   * (0x22 is never part of a multi-byte character in UTF-8 or GB18030.)
   */
  quoted: boolean;
}

const QUOTE = 0x22;
const READ_SIZE = 256 * 1024;

const UTF8_BOM = [0xef, 0xbb, 0xbf] as const;

function startsWithBom(chunk: Buffer): boolean {
  return chunk.length >= 3 && chunk[0] === UTF8_BOM[0] && chunk[1] === UTF8_BOM[1] && chunk[2] === UTF8_BOM[2];
}

/** Strict streaming UTF-8 check: false from the first invalid byte sequence on. */
function utf8Checker(): { push(chunk: Buffer): void; end(): boolean } {
  const decoder = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });
  let valid = true;
  const attempt = (fn: () => void): void => {
    try {
      fn();
    } catch {
      valid = false;
    }
  };
  return {
    push(chunk) {
      if (valid) attempt(() => decoder.decode(chunk, { stream: true }));
    },
    // The final call also rejects a multi-byte character cut off by the end of the file.
    end() {
      if (valid) attempt(() => decoder.decode());
      return valid;
    },
  };
}

/** Hashes and measures the file and decides its encoding. Rejects with the fs error if unreadable. */
export async function inspectFile(file: string): Promise<FileInspection> {
  const hash = createHash('sha256');
  const utf8 = utf8Checker();
  let size = 0;
  let bom = false;
  let quoted = false;
  for await (const chunk of createReadStream(file, { highWaterMark: READ_SIZE }) as AsyncIterable<Buffer>) {
    // The first chunk of a file stream holds the first 3 bytes unless the file is shorter.
    if (size === 0) bom = startsWithBom(chunk);
    size += chunk.length;
    hash.update(chunk);
    if (!bom) utf8.push(chunk);
    if (!quoted) quoted = chunk.includes(QUOTE);
  }
  const encoding = bom || utf8.end() ? 'utf-8' : 'gb18030';
  return { sha256: hash.digest('hex'), size, encoding, bom, quoted };
}

/** SHA-256 of the first `bytes` bytes of file (to recognise a file that grew from one seen before). */
export async function hashPrefix(file: string, bytes: number): Promise<string> {
  const hash = createHash('sha256');
  if (bytes > 0) for await (const chunk of createReadStream(file, { highWaterMark: READ_SIZE, end: bytes - 1 }) as AsyncIterable<Buffer>) hash.update(chunk);
  return hash.digest('hex');
}
