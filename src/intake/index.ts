// CSV intake: a dropped file's rows, streamed in chunks so memory stays flat however large the
// file is (read stream -> decoder -> csv-parse). File-level problems (unreadable, no header,
// ambiguous header, broken quoting) refuse the whole file with FileRefusedError; row-level
// problems travel on the row. Every cell is unguarded, so a CSV the program exported and someone
// dropped back in sends exactly the text it was made from.
//
// Line numbers are counted here rather than asked of csv-parse: its per-record info costs about
// half its speed. Blank lines reach us as records (skip_empty_lines off) and a record spans
// 1 + (line breaks inside its cells) lines, which gives the physical start line of every record.
import { createReadStream } from 'node:fs';
import { open } from 'node:fs/promises';
import { Transform, finished, pipeline, type Readable } from 'node:stream';
import { CsvError, parse } from 'csv-parse';
import { unguardCell } from '../csvio/guard.js';
import { FileRefusedError, type RefusalCode } from './errors.js';
import { type Utf16, utf16ByMark } from './utf16.js';
import { mapHeader, TITLE_ROWS_AT_MOST } from './headers.js';
import { openQuoteLine } from './quotes.js';
import { markQuotedEmpty } from './quotedEmpty.js';
import {
  buildRow,
  extraColumnNames,
  flagSwallowedRows,
  isBlankRecord,
  takeQuotedEmpty,
  type IntakeOptions,
  type IntakeRow,
  type RowShape,
} from './row.js';

export { FileRefusedError, type RefusalCode } from './errors.js';
export { inspectFile, type FileInspection } from './inspect.js';
export { mapHeader, TITLE_ROWS_AT_MOST, type ColumnMap } from './headers.js';
export type { Delimiter } from './delimiter.js';
export { normalisePhone, type PhoneResult } from './phone.js';
export type { IntakeOptions, IntakeRow } from './row.js';

// A chunk is one journal write between awaits: an answer that arrives meanwhile waits for the
// chunk's end. Requests commit intents rather than the intake's transaction (journal/intents.ts),
// so a turn between chunks costs little, and small chunks let answers through sooner; below 100
// rows they stop helping (docs/benchmark-history.md, "Intents").
const CHUNK_ROWS = 100;
// csv-parse turns a whole read into records at once, and they wait in the stream's buffer while
// the chunks before them are written and requests get their turns: young objects that live
// through collections and so fill the old generation: the smaller the read, the fewer of them
// (docs/benchmark-history.md, "Earlier series").
const READ_SIZE = 64 * 1024;
// A record of a contact list is a few hundred characters. A far longer one is not a list (a log,
// a dump without line breaks), or a stray quote made the rest of the file one value: refused,
// before it takes the memory of the whole file (a line's text as a string and its record take
// many times its size).
export const MAX_RECORD_CHARS = 1024 * 1024;

/** What to do with an Excel workbook: CSV UTF-8 keeps Chinese text as it is. */
export const EXCEL_ADVICE =
  'this is an Excel workbook: save it as CSV UTF-8 (in Excel: File, Save As, "CSV UTF-8 (Comma delimited)") and drop the .csv file';

/** File types people drop by mistake, told apart by their first bytes. */
const WRONG_KINDS: Array<{ magic: number[]; reason: string; code: RefusalCode }> = [
  {
    magic: [0x50, 0x4b, 0x03, 0x04],
    reason: `${EXCEL_ADVICE} (or it is another zip file, not CSV)`,
    code: 'E_FILE_EXCEL',
  },
  {
    magic: [0xd0, 0xcf, 0x11, 0xe0],
    reason: `${EXCEL_ADVICE} (an old .xls workbook)`,
    code: 'E_FILE_EXCEL',
  },
];

/**
 * UTF-16 without its byte order mark: text whose first character has a zero byte. Which byte
 * order, and so which text, cannot be known for sure; Excel's "Unicode Text" always writes the
 * mark.
 */
const UTF16_UNMARKED =
  'this looks like UTF-16 text without a byte order mark, which cannot be read for sure: save it as CSV UTF-8 (or from Excel as "Unicode Text", which writes the mark)';

/**
 * Checks the file can be read and is not obviously something other than CSV text; returns the
 * encoding its UTF-16 byte order mark says, if it has one.
 */
async function sniffFile(file: string): Promise<Utf16 | undefined> {
  const head = Buffer.alloc(4);
  let length: number;
  try {
    const handle = await open(file, 'r');
    try {
      ({ bytesRead: length } = await handle.read(head, 0, 4, 0));
    } finally {
      await handle.close();
    }
  } catch (err) {
    throw new FileRefusedError(
      'E_FILE_UNREADABLE',
      file,
      `cannot read the file: ${(err as Error).message}`,
    );
  }
  const wrong = WRONG_KINDS.find(
    ({ magic }) => length >= magic.length && magic.every((b, i) => head[i] === b),
  );
  if (wrong) throw new FileRefusedError(wrong.code, file, wrong.reason);
  const marked = utf16ByMark(head.subarray(0, length));
  if (marked) return marked;
  if (length >= 2 && (head[0] === 0) !== (head[1] === 0))
    throw new FileRefusedError('E_FILE_UTF16', file, UTF16_UNMARKED);
  return undefined;
}

/** Bytes in `encoding` to text, a BOM dropped; csv-parse then reads the text. */
function decoder(encoding: string): Transform {
  const text = new TextDecoder(encoding);
  return new Transform({
    transform(chunk: Buffer, _encoding, done) {
      done(null, text.decode(chunk, { stream: true }));
    },
    flush(done) {
      done(null, text.decode());
    },
  });
}

function openRecords(file: string, options: IntakeOptions): Readable {
  const { encoding, bytes } = options;
  const delimiter = options.delimiter ?? ',';
  const parser = parse({
    bom: true,
    delimiter,
    relax_column_count: true,
    relax_quotes: true,
    max_record_size: MAX_RECORD_CHARS,
    skip_empty_lines: false,
    // Explicit, so a file mixing CRLF and LF (hand edits after an Excel export) still splits.
    record_delimiter: ['\r\n', '\n', '\r'],
  });
  const source = createReadStream(file, {
    highWaterMark: READ_SIZE,
    ...(bytes ? { end: bytes - 1 } : {}),
  });
  // A UTF-8 file without a double quote has no quoted empty value: csv-parse reads its bytes
  // directly.
  const streams =
    options.quoted === false
      ? [source, ...(encoding === 'utf-8' ? [] : [decoder(encoding)]), parser]
      : [source, decoder(encoding), markQuotedEmpty(delimiter), parser];
  // Errors reach the consumer through the parser's iterator; the callback only keeps them from
  // being unhandled.
  pipeline(streams, () => {});
  return parser;
}

function lineBreaksIn(cell: string): number {
  let count = 0;
  for (let i = 0; i < cell.length; i++) {
    const ch = cell.charCodeAt(i);
    if (ch === 10) count++;
    else if (ch === 13) {
      count++;
      if (cell.charCodeAt(i + 1) === 10) i++;
    }
  }
  return count;
}

/** Lines a record takes beyond its first: the line breaks inside quoted cells. */
function extraLines(cells: readonly string[]): number {
  let extra = 0;
  for (let i = 0; i < cells.length; i++) {
    const cell = cells[i] as string;
    if (cell.indexOf('\n') !== -1 || cell.indexOf('\r') !== -1) extra += lineBreaksIn(cell);
  }
  return extra;
}

function headerShape(
  file: string,
  cells: readonly string[],
  line: number,
  options: IntakeOptions,
): RowShape {
  try {
    const map = mapHeader(cells.map(unguardCell));
    if (map.templateId === undefined && !options.defaultTemplateId) {
      throw new FileRefusedError(
        'E_NO_TEMPLATE_COLUMN',
        file,
        'no template column (templateId, template, 模板, 模板ID or 模板编号) and no default templateId is set',
      );
    }
    if (map.appId === undefined && !options.defaultAppId) {
      throw new FileRefusedError(
        'E_NO_APP_COLUMN',
        file,
        'no app column (appId, app or 应用ID) and no default appId is set',
      );
    }
    const shape = { map, extraNames: extraColumnNames(map), options };
    options.onHeader?.(map, shape.extraNames);
    return shape;
  } catch (err) {
    if (err instanceof FileRefusedError)
      throw new FileRefusedError(err.code, file, err.reason, line);
    throw err;
  }
}

/**
 * Finds the header among the first rows: the rows before it that name no phone column are title
 * rows (see TITLE_ROWS_AT_MOST). `refusedFirst` is the first such row's refusal, kept so that a
 * file without any header is refused for its first row.
 */
class HeaderSearch {
  titleRows = 0;
  refusedFirst: FileRefusedError | undefined;

  /** The shape, or undefined for a title row; throws once the header cannot be further down. */
  take(
    file: string,
    cells: readonly string[],
    line: number,
    options: IntakeOptions,
  ): RowShape | undefined {
    try {
      return headerShape(file, cells, line, options);
    } catch (err) {
      if (!(err instanceof FileRefusedError) || err.code !== 'E_NO_PHONE_COLUMN') throw err;
      this.refusedFirst ??= err;
      if (this.titleRows++ < TITLE_ROWS_AT_MOST) return undefined;
      throw this.noHeader();
    }
  }

  /** The refusal of a file whose first rows name no phone column. */
  noHeader(): FileRefusedError {
    const first = this.refusedFirst!;
    const why = `${first.reason}; none of the first ${TITLE_ROWS_AT_MOST + 1} rows names one (title rows above the header are skipped, no more than ${TITLE_ROWS_AT_MOST})`;
    return new FileRefusedError(first.code, first.file, why, first.line);
  }
}

async function asRefusal(
  file: string,
  err: unknown,
  line: number,
  options: IntakeOptions,
): Promise<unknown> {
  if (err instanceof FileRefusedError) return err;
  if (err instanceof CsvError && err.code === 'CSV_QUOTE_NOT_CLOSED') {
    const opened = await openQuoteLine(file, options).catch(() => undefined);
    const why =
      'a double quote opened here is never closed, so the rest of the file would be one value: close it, or write it twice ("") if it is part of the text';
    return new FileRefusedError('E_FILE_QUOTE', file, why, opened ?? line);
  }
  if (err instanceof CsvError && err.code === 'CSV_MAX_RECORD_SIZE') {
    const why = `a record that starts here or after is longer than ${MAX_RECORD_CHARS / (1024 * 1024)} MB of text: this is not a list of rows (or a double quote left open made the rest of the file one value)`;
    return new FileRefusedError('E_FILE_LONG_RECORD', file, why, line);
  }
  if (err instanceof CsvError)
    return new FileRefusedError(
      'E_FILE_CSV',
      file,
      `the CSV cannot be parsed: ${err.message}`,
      line,
    );
  // File system errors (they name a syscall) refuse the file; anything else is a bug or comes
  // from the caller's onHeader, and is passed on unchanged.
  if (err instanceof Error && 'syscall' in err)
    return new FileRefusedError('E_FILE_UNREADABLE', file, `cannot read the file: ${err.message}`);
  return err;
}

/** Records taken from the parser between two waits at most: a few chunks' worth. */
const RECORDS_AT_ONCE = 5 * CHUNK_ROWS;

/**
 * The parser's records, as many as it holds at a time (up to RECORDS_AT_ONCE), in order. A
 * `for await` over the stream itself costs a promise and a turn per record (~10 % of intake's CPU
 * at 1M rows); otherwise the same: its error is thrown once the records read before it are taken,
 * and the stream is destroyed when the caller stops early.
 */
async function* recordBatches(stream: Readable): AsyncGenerator<string[][]> {
  let wake: (() => void) | undefined;
  let ended: Error | null | undefined; // undefined while the stream runs; null: it ended well
  const next = () => {
    const resolve = wake;
    wake = undefined;
    resolve?.();
  };
  stream.on('readable', next);
  const stopWatching = finished(stream, { writable: false }, (err) => {
    ended = err ?? null;
    next();
  });
  try {
    for (;;) {
      const records: string[][] = [];
      let record: string[] | null = null;
      while (
        records.length < RECORDS_AT_ONCE &&
        !stream.destroyed &&
        (record = stream.read() as string[] | null) !== null
      )
        records.push(record);
      if (records.length > 0) yield records;
      else if (ended) throw ended;
      else if (ended === null) return;
      else await new Promise<void>((resolve) => (wake = resolve));
    }
  } finally {
    stream.off('readable', next);
    stopWatching();
    stream.destroy();
  }
}

/**
 * The rows of file, in chunks of up to CHUNK_ROWS, in file order. Throws FileRefusedError for a
 * file-level problem; note a problem found late (broken quoting near the end) is thrown after
 * earlier chunks were yielded, so the caller must treat the file as a whole.
 */
export async function* readRows(file: string, given: IntakeOptions): AsyncGenerator<IntakeRow[]> {
  // A UTF-16 file is read as its mark says, whatever the caller took it for.
  const marked = await sniffFile(file);
  const options = marked ? { ...given, encoding: marked } : given;
  let line = 0; // last physical line consumed
  let shape: RowShape | undefined;
  const header = new HeaderSearch();
  let chunk: IntakeRow[] = [];
  let anyRow = false;
  try {
    for await (const records of recordBatches(openRecords(file, options))) {
      for (const cells of records) {
        const start = line + 1;
        line = start + extraLines(cells);
        const quotedEmpty = options.quoted === false ? undefined : takeQuotedEmpty(cells);
        if (isBlankRecord(cells)) continue;
        if (shape === undefined) {
          shape = header.take(file, cells, start, options);
          continue;
        }
        const row = buildRow(cells, start, shape, quotedEmpty);
        if (line > start) flagSwallowedRows(row, cells, line, shape);
        chunk.push(row);
        anyRow = true;
        if (chunk.length === CHUNK_ROWS) {
          yield chunk;
          chunk = [];
        }
      }
    }
  } catch (err) {
    throw await asRefusal(file, err, line + 1, options);
  }
  if (shape === undefined && header.refusedFirst) throw header.noHeader();
  if (shape === undefined)
    throw new FileRefusedError('E_FILE_EMPTY', file, 'the file is empty: a header row is required');
  if (chunk.length > 0) yield chunk;
  else if (!anyRow)
    throw new FileRefusedError(
      'E_FILE_NO_ROWS',
      file,
      'the file has a header row but no rows under it: nothing to send (was the export cut short?)',
    );
}
