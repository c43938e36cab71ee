// What `smsdrop status` asks of the journal: files under way, requests and answers since a time,
// what is out now, and what the journal still holds.
import type { Journal } from './connection.js';
import type { FileLine } from '../ports/records.js';
import { sql, sqlPluck } from './sql.js';
import { BATCH_STATE, FILE_STATUS, OUTCOME_STATES, sqlList } from '../ports/states.js';
import type { HeldFile } from '../ports/records.js';

/** Files still being read or sent. */
export function unfinishedFileLines(db: Journal): FileLine[] {
  return sql(
    db,
    `SELECT * FROM v_files WHERE status IN ${sqlList([FILE_STATUS.intake, FILE_STATUS.sending])} ORDER BY id`,
  ).all() as FileLine[];
}

/** Requests answered (or ended) since `since` (ISO), and when the first of them started. */
export function requestsFinishedSince(
  db: Journal,
  since: string,
): { count: number; first: string | null } {
  return sql(
    db,
    'SELECT count(*) AS count, min(started_at) AS first FROM attempts WHERE finished_at >= ?',
  ).get(since) as { count: number; first: string | null };
}

/** How often each of these status codes answered a request since `since` (ISO), commonest first. */
export function answersWithCodesSince(
  db: Journal,
  codes: readonly string[],
  since: string,
): Array<{ code: string; count: number }> {
  if (codes.length === 0) return [];
  return sql(
    db,
    `SELECT status_code AS code, count(*) AS count FROM attempts WHERE finished_at >= ? AND status_code IN (${codes.map(() => '?').join(', ')})
     GROUP BY status_code ORDER BY count DESC, status_code`,
  ).all(since, ...codes) as Array<{ code: string; count: number }>;
}

/** Numbers of the file whose batch got its outcome since `since` (ISO). */
export function numbersSettledSince(db: Journal, fileId: number, since: string): number {
  return sqlPluck(
    db,
    `SELECT coalesce(sum(numbers), 0) FROM batches WHERE file_id = ? AND state IN ${sqlList(OUTCOME_STATES)} AND updated_at >= ?`,
  ).get(fileId, since) as number;
}

/** Requests of the file out now, and their numbers. */
export function inFlight(db: Journal, fileId: number): { requests: number; numbers: number } {
  return sql(
    db,
    `SELECT count(*) AS requests, coalesce(sum(numbers), 0) AS numbers FROM batches WHERE file_id = ? AND state = '${BATCH_STATE.sending}'`,
  ).get(fileId) as {
    requests: number;
    numbers: number;
  };
}

/** The latest answered attempt of any file. */
export function lastAnswer(
  db: Journal,
): { outcome: string | null; status_code: string | null; finished_at: string } | undefined {
  return sql(
    db,
    'SELECT outcome, status_code, finished_at FROM attempts WHERE finished_at IS NOT NULL ORDER BY finished_at DESC LIMIT 1',
  ).get() as
    { outcome: string | null; status_code: string | null; finished_at: string } | undefined;
}

/** The oldest file whose rows are still in the journal (not pruned), or undefined when none is. */
export function oldestHeldFile(db: Journal): HeldFile | undefined {
  return sql(
    db,
    'SELECT id, name, status, created_at, finished_at FROM files WHERE pruned_at IS NULL ORDER BY id LIMIT 1',
  ).get() as HeldFile | undefined;
}

/** How many files were pruned: only their line is left (prune.ts). */
export function prunedFileCount(db: Journal): number {
  return sqlPluck(db, 'SELECT count(*) FROM files WHERE pruned_at IS NOT NULL').get() as number;
}
