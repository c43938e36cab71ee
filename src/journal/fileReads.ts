// A file's journal record and its counts, read by the file writers (files.ts) and by the events
// that report on files (outbox.ts).
import type { Journal } from './connection.js';
import { sql } from './sql.js';
import type { FileStatus } from './states.js';

export interface FileRecord {
  id: number;
  sha256: string;
  generation: number;
  name: string;
  path: string | null;
  size: number;
  encoding: string;
  status: FileStatus;
  error: string | null;
  header: string | null;
  created_at: string;
  started_at: string | null;
  finished_at: string | null;
  /**
   * The daemon's last taking of these bytes from inbox/, when it continued this record (noteTaken).
   */
  taken_at: string | null;
  /** The provider and account it was planned for (see migration 12); null: not recorded. */
  provider: string | null;
  /** When its rows went (prune.ts): only this line and its counts are left. */
  pruned_at: string | null;
}

export function findLatestFile(db: Journal, sha256: string): FileRecord | undefined {
  return sql(db, 'SELECT * FROM files WHERE sha256 = ? ORDER BY generation DESC LIMIT 1').get(
    sha256,
  ) as FileRecord | undefined;
}

export function getFile(db: Journal, id: number): FileRecord | undefined {
  return sql(db, 'SELECT * FROM files WHERE id = ?').get(id) as FileRecord | undefined;
}

export interface FileCounts {
  rows: number;
  invalid: number;
  duplicates: number;
  /** Of the duplicates, the rows whose message another file sends their number (sentBefore.ts). */
  repeats: number;
  accepted: number;
  failed: number;
  unknown: number;
  pending: number;
  requests: number;
}

/**
 * Row counts by final status (they add up to rows) and requests made: the file's line of v_files.
 */
export function countFile(db: Journal, fileId: number): FileCounts {
  return sql(
    db,
    `SELECT v.rows, v.invalid, v.duplicates, f.repeats, v.accepted, v.failed, v.unknown, v.pending, v.requests
     FROM v_files v JOIN files f ON f.id = v.id WHERE v.id = ?`,
  ).get(fileId) as FileCounts;
}

/** A line of v_files. */
export interface FileLine extends FileCounts {
  id: number;
  name: string;
  sha256: string;
  status: string;
  started_at: string | null;
  finished_at: string | null;
}
