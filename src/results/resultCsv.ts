// NAME.result.csv: one line per input row, with its final status. Excel-safe (see csvio); digits
// Excel would change (the status code 000000, a date 20260101120000, a number 0044…) are written
// as ="digits", as export writes them (csvio's guardDigits): Excel shows them as they are.
import path from 'node:path';
import { createCsvWriter, csvLine } from '../csvio/index.js';
import type { ResultFormat, ResultReads, ResultTuple, StatusCells } from '../ports/results.js';
import { type ResultSpools, takeSpooled, moveInto } from './spool.js';

export const RESULT_HEADER = [
  'line',
  'phone',
  'normalised_phone',
  'status',
  'status_code',
  'message',
  'sms_message_sid',
  'date_created',
];

const DIGITS_AS_TEXT = true;

/** One CSV record without its CRLF. */
const record = (cells: StatusCells | ResultTuple): string =>
  csvLine(cells, DIGITS_AS_TEXT).slice(0, -2);

/** The cells of result lines as csvLine writes them, for the journal's result pages. */
export const RESULT_FORMAT: ResultFormat = { tail: record, oddRow: record };

/**
 * Writes NAME.result.csv into outDir; returns its path. When the run that just finished the file
 * wrote its lines ahead (see spoolResults), that file is moved into place instead.
 */
export async function writeResultCsv(
  reads: ResultReads,
  fileId: number,
  outDir: string,
  baseName: string,
  spools?: ResultSpools,
): Promise<string> {
  const file = path.join(outDir, `${baseName}.result.csv`);
  const spooled = spools && (await takeSpooled(spools, reads, fileId));
  if (spooled !== undefined && moveInto(spooled, file)) return file;
  const writer = createCsvWriter(file, RESULT_HEADER);
  const cursor = reads.resultPages(fileId, RESULT_FORMAT);
  try {
    for await (const pages of cursor.restPages()) for (const page of pages) writer.writeText(page);
  } finally {
    cursor.close();
    await writer.close();
  }
  return file;
}
