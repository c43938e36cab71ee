// The one file-level error of intake: the whole file is refused and nothing in it is sent.
// Row-level problems are never thrown; they travel on the row (IntakeRow.error).

/** Stable names of the refusals callers tell apart (the others carry none). */
export type RefusalCode = 'E_FILE_EXCEL' | 'E_NO_PHONE_COLUMN' | 'E_FILE_MIXED_ENCODING';

export class FileRefusedError extends Error {
  override name = 'FileRefusedError';
  /** Why the file was refused, without the file name and line. */
  readonly reason: string;

  constructor(
    public readonly file: string,
    message: string,
    public readonly line?: number,
    public readonly code?: RefusalCode,
  ) {
    const where = (file ? file : 'file') + (line === undefined ? '' : `, line ${line}`);
    super(`${where}: ${message}`);
    this.reason = message;
  }
}
