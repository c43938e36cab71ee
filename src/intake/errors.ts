// The one file-level error of intake: the whole file is refused and nothing in it is sent.
// Row-level problems are never thrown; they travel on the row (IntakeRow.error).

export class FileRefusedError extends Error {
  override name = 'FileRefusedError';
  /** Why the file was refused, without the file name and line. */
  readonly reason: string;

  constructor(
    public readonly file: string,
    message: string,
    public readonly line?: number,
  ) {
    const where = (file ? file : 'file') + (line === undefined ? '' : `, line ${line}`);
    super(`${where}: ${message}`);
    this.reason = message;
  }
}
