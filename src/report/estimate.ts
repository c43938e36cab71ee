// A file's rows while it is still being read: only the rows read so far are in the journal, so
// its total is estimated from the bytes read against the file's size (files.read_bytes, noted
// while intake reads), and said as an estimate. Once read, the counts are exact. Read by
// `smsdrop status` and the daemon's progress line, which would otherwise count the rows read so
// far as the whole file ("0 to go", an ETA of the part read).
import { FILE_STATUS } from '../ports/states.js';

export interface RowsEstimate {
  rows: number;
  /** Rows that will be sent: not invalid, not duplicates (while reading: the rows read so far). */
  sendable: number;
  /** An estimate from the part read; false: the file is read, the counts are exact. */
  estimated: boolean;
}

/**
 * The file's rows, exact once it is read, estimated while it is read; undefined while it is read
 * and too little is known for an estimate (nothing read yet, or the system cannot say how far).
 */
export function estimateRows(
  line: { status: string; rows: number; invalid: number; duplicates: number },
  file: { size: number; read_bytes: number | null } | undefined,
): RowsEstimate | undefined {
  const sendable = line.rows - line.invalid - line.duplicates;
  if (line.status !== FILE_STATUS.intake) return { rows: line.rows, sendable, estimated: false };
  const readBytes = file?.read_bytes ?? 0;
  if (!file || readBytes <= 0 || line.rows === 0) return undefined;
  const scale = Math.max(1, file.size / readBytes);
  return {
    rows: Math.max(line.rows, Math.round(line.rows * scale)),
    sendable: Math.max(sendable, Math.round(sendable * scale)),
    estimated: true,
  };
}

/** "500000 rows", or "~500000 rows (estimated)". */
export function rowsText(estimate: RowsEstimate | undefined): string {
  if (!estimate) return 'rows not known yet (reading the file)';
  return estimate.estimated ? `~${estimate.rows} rows (estimated)` : `${estimate.rows} rows`;
}
