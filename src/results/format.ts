// The lines of NAME.result.csv: its header, and the cells the journal's result pages leave to
// csvio (quoted, guarded, or digits Excel would change, written as ="digits").
import { csvLine } from '../csvio/index.js';
import type { ResultFormat, ResultTuple, StatusCells } from '../ports/results.js';

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

/** One CSV record without its CRLF, digits Excel would change written as ="digits". */
const record = (cells: StatusCells | ResultTuple): string => csvLine(cells, true).slice(0, -2);

/** The cells of result lines as csvLine writes them, for the journal's result pages. */
export const RESULT_FORMAT: ResultFormat = { tail: record, oddRow: record };
