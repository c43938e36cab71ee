// The one file-level error of intake: the whole file is refused and nothing in it is sent.
// Row-level problems are never thrown; they travel on the row (IntakeRow.error).
import { SmsdropError } from '../errors.js';

/** Why a file is refused, one code per reason (docs/errors.md). */
export type RefusalCode =
  | 'E_FILE_UNREADABLE'
  | 'E_FILE_EXCEL'
  | 'E_FILE_UTF16'
  | 'E_FILE_EMPTY'
  | 'E_FILE_NO_ROWS'
  | 'E_FILE_QUOTE'
  | 'E_FILE_LONG_RECORD'
  | 'E_FILE_CSV'
  | 'E_FILE_CHANGED'
  | 'E_FILE_MIXED_ENCODING'
  | 'E_FILE_ENCODING_AMBIGUOUS'
  | 'E_NO_PHONE_COLUMN'
  | 'E_NO_TEMPLATE_COLUMN'
  | 'E_NO_APP_COLUMN'
  | 'E_HEADER_TWO_COLUMNS'
  | 'E_HEADER_VALUE_COLUMNS';

export class FileRefusedError extends SmsdropError {
  /** Why the file was refused, without the file name and line. */
  readonly reason: string;

  constructor(
    override readonly code: RefusalCode,
    public readonly file: string,
    message: string,
    public readonly line?: number,
  ) {
    const where = (file ? file : 'file') + (line === undefined ? '' : `, line ${line}`);
    super(code, `${where}: ${message}`);
    this.reason = message;
  }
}
