// A file's journal record and its counts, read by the file writers (files.ts) and by the events
// that report on files (outbox.ts).
import type { Journal } from './connection.js';
import { sql } from './sql.js';
import type { FileCounts, FileRecord } from '../ports/records.js';

export function findLatestFile(db: Journal, sha256: string): FileRecord | undefined {
  return sql(db, 'SELECT * FROM files WHERE sha256 = ? ORDER BY generation DESC LIMIT 1').get(
    sha256,
  ) as FileRecord | undefined;
}

export function getFile(db: Journal, id: number): FileRecord | undefined {
  return sql(db, 'SELECT * FROM files WHERE id = ?').get(id) as FileRecord | undefined;
}

/**
 * Row counts by final status (they add up to rows) and requests made: the file's line of v_files.
 */
export function countFile(db: Journal, fileId: number): FileCounts {
  return sql(
    db,
    `SELECT v.rows, v.invalid, v.duplicates, f.repeats, v.accepted, v.failed, v.unknown, v.cancelled, v.pending,
       v.requests
     FROM v_files v JOIN files f ON f.id = v.id WHERE v.id = ?`,
  ).get(fileId) as FileCounts;
}
