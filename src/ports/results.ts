// What the result files (NAME.result.csv, NAME.rejected.csv, written by src/results/) read of the
// journal: result lines as page text, in whose making every cell to quote or guard is written by
// the format results/ hands in; and the invalid rows with the header they came under.
import type { Awaitable, Pages } from './awaitable.js';

/**
 * How a row repeating another file's row is described (both journals' row_results view, and the
 * result file), followed by ": line N of NAME (file ID)". That row's outcome is in the other
 * file's report. No comma: SQLite writes it into the result file unquoted (resultPageSql).
 */
export const SENT_BY_ANOTHER_FILE =
  'the same message to this number goes with another file (its report has the outcome)';
/**
 * The same, when that row is gone: its file was read again (a file cut short, then continued by its
 * complete copy).
 */
export const SENT_BY_A_FILE_READ_AGAIN =
  'the same message to this number goes with another file read again since (its report has the outcome)';

/** A row's status cells (empty where the journal has none). */
export type StatusCells = [status: string, code: string, msg: string, sid: string, created: string];

/** A row's result cells, as the row_results view has them (empty where it has none). */
export type ResultTuple = [line: string, phoneRaw: string, phone: string, ...StatusCells];

/**
 * How result cells are written, from results/: each returns the cells as one CSV record without
 * its CRLF. A store may write a line itself only where it is exactly what these would write: a
 * valid row whose phone cells are plain digits Excel keeps as they are (no leading 0, fewer than
 * 12), followed by its batch's tail.
 */
export interface ResultFormat {
  /** The status cells of every row of one batch. */
  tail(cells: StatusCells): string;
  /** A whole line, for every other row. */
  oddRow(row: ResultTuple): string;
}

/** The result lines of one file, in row order, as page text (whole CRLF-ended records). */
export interface ResultCursor {
  /**
   * The next pages whose rows are all final, until `deadline` (a performance.now() time) passes;
   * none while a row of the next page can still change.
   */
  finalPages(deadline: number): Awaitable<string[]>;
  /** Every page not handed over yet, final or not (pending rows say pending). */
  restPages(): Pages<string>;
  /** Ends the cursor (what the store keeps for it). */
  close(): void;
}

/** An invalid row, as NAME.rejected.csv is written from. */
export interface RejectedRow {
  line: number;
  error: string;
  phone_raw: string;
  app_id: string | null;
  template_id: string | null;
  datas: string | null;
  extras: string | null;
  /** The row's cells as read (invalid_cells), when intake kept them. */
  cells: string | null;
}

/** What NAME.rejected.csv needs of the file: its invalid rows' count and the header it had. */
export interface RejectedHeader {
  invalid: number;
  /** The header's cells as read, when recorded. */
  columns: string[] | undefined;
  /** Names of the columns the file had besides phone, app, template and values. */
  extras: string[];
}

/** The ReadStore verbs of the result files (ExportReads has them). */
export interface ResultReads {
  /** The file's result lines, page by page; cells to quote or guard written by `format`. */
  resultPages(fileId: number, format: ResultFormat): ResultCursor;
  /** What the file's batches look like now: a result file written before a change is stale. */
  resultsStamp(fileId: number): Awaitable<string>;
  /** The file's invalid rows in row order. */
  rejectedRows(fileId: number): Pages<RejectedRow>;
  /** Undefined: no such file. */
  rejectedHeader(fileId: number): Awaitable<RejectedHeader | undefined>;
}
