// Writing CSV for people: RFC 4180 quoting, CRLF line ends, a UTF-8 BOM (so Excel picks UTF-8
// rather than the system code page) and the formula guard on every cell.
// The writer is synchronous underneath (buffered writeSync): callers write rows from loops over
// the journal, and a synchronous write keeps memory flat however far the disk falls behind.
import { closeSync, openSync, writeSync } from 'node:fs';
import { SmsdropError } from '../errors.js';
import { guardCell, guardDigits } from './guard.js';

const NEEDS_QUOTES = /[",\r\n]|^\s|\s$/;
const QUOTE = /"/g;
const FLUSH_AT = 64 * 1024;

function quoteCell(cell: string, digitsAsText: boolean): string {
  const s = digitsAsText ? guardDigits(cell) : guardCell(cell);
  return NEEDS_QUOTES.test(s) ? '"' + s.replace(QUOTE, '""') + '"' : s;
}

/**
 * One CSV record: cells guarded and quoted where needed, ending in CRLF. digitsAsText: digits
 * Excel would change are written as ="digits" (guardDigits), for files meant to be dropped back.
 */
export function csvLine(cells: readonly string[], digitsAsText = false): string {
  let line = '';
  for (let i = 0; i < cells.length; i++)
    line += (i === 0 ? '' : ',') + quoteCell(cells[i] ?? '', digitsAsText);
  return line + '\r\n';
}

export interface CsvWriterOptions {
  /** Start the file with a UTF-8 byte order mark. Default true. */
  bom?: boolean;
  /** Digits Excel would change written as ="digits" (see csvLine). Default false. */
  digitsAsText?: boolean;
}

export interface CsvWriter {
  write(cells: readonly string[]): void;
  /**
   * Appends CSV text made elsewhere: whole records, guarded and quoted as csvLine does, each ending
   * in CRLF.
   */
  writeText(text: string): void;
  /** Flushes and closes the file. Safe to call twice: returns the same promise. */
  close(): Promise<void>;
}

/** Creates (or truncates) file and writes the header line; rows follow with write(). */
export function createCsvWriter(
  file: string,
  header: readonly string[],
  options: CsvWriterOptions = {},
): CsvWriter {
  const fd = openSync(file, 'w');
  let pending = ((options.bom ?? true) ? '\uFEFF' : '') + csvLine(header);
  let closing: Promise<void> | undefined;

  const flush = (): void => {
    const text = pending;
    pending = '';
    // A string goes to the file without a Buffer per flush: such Buffers live outside the JS heap
    // until a GC and would make a large result file raise the peak memory.
    const written = writeSync(fd, text, null, 'utf8');
    const size = Buffer.byteLength(text, 'utf8');
    if (written === size) return;
    // writeSync may write less than asked (rare on files, possible on pipes): finish the rest.
    const bytes = Buffer.from(text, 'utf8');
    for (let done = written; done < bytes.length;) done += writeSync(fd, bytes, done);
  };

  const writeText = (text: string): void => {
    if (closing) throw new SmsdropError('E_INTERNAL', `CSV writer for ${file} is closed`);
    pending += text;
    if (pending.length >= FLUSH_AT) flush();
  };

  return {
    write: (cells) => writeText(csvLine(cells, options.digitsAsText ?? false)),
    writeText,
    close() {
      // A failure in flush or close rejects (the executor throws); the descriptor is closed either
      // way.
      closing ??= new Promise<void>((resolve) => {
        try {
          flush();
        } finally {
          closeSync(fd);
        }
        resolve();
      });
      return closing;
    },
  };
}
