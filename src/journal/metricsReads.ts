// Figures of the daemon's /metrics, its dashboard and its progress line (http/, daemon/), read when
// they are asked for: nothing on the sending path keeps them. The batches and attempts tables are
// a few rows per thousand numbers.
import type { Journal } from './connection.js';
import type { FileWaiting } from '../ports/reads.js';
import { sql, sqlPluck } from './sql.js';
import {
  FILE_CONTROL,
  FILE_STATUS,
  SETTLED_AS,
  SETTLED_STATES,
  sqlList,
  UNSETTLED_STATES,
} from '../ports/states.js';

/**
 * Numbers still to send: in live batches (planned or being sent), of every file or of the files
 * with these hashes still sending.
 */
export function numbersToSend(db: Journal, sha256s?: readonly string[]): number {
  if (sha256s === undefined)
    return sqlPluck(
      db,
      `SELECT coalesce(sum(numbers), 0) FROM batches WHERE state IN ${sqlList(UNSETTLED_STATES)}`,
    ).get() as number;
  if (sha256s.length === 0) return 0;
  const marks = sha256s.map(() => '?').join(', ');
  return sqlPluck(
    db,
    `SELECT coalesce(sum(numbers), 0) FROM batches WHERE state IN ${sqlList(UNSETTLED_STATES)}
     AND file_id IN (SELECT id FROM files WHERE sha256 IN (${marks}) AND status = '${FILE_STATUS.sending}')`,
  ).get(...sha256s) as number;
}

/** Unfinished files held, scheduled or paused at `now` (ports/reads.ts filesWaiting). */
export function filesWaiting(
  db: Journal,
  now: string,
): Array<{ waiting: FileWaiting; files: number }> {
  return sql(
    db,
    `SELECT CASE WHEN control IS NULL THEN 'scheduled' ELSE control END AS waiting, count(*) AS files
     FROM files WHERE status NOT IN ('${FILE_STATUS.done}', '${FILE_STATUS.refused}')
       AND (control IN ('${FILE_CONTROL.held}', '${FILE_CONTROL.paused}') OR (control IS NULL AND start_at > ?))
     GROUP BY 1 ORDER BY 1`,
  ).all(now) as Array<{ waiting: FileWaiting; files: number }>;
}

/** Files of each status. */
export function filesByStatus(db: Journal): Array<{ status: string; files: number }> {
  return sql(
    db,
    'SELECT status, count(*) AS files FROM files GROUP BY status ORDER BY status',
  ).all() as Array<{ status: string; files: number }>;
}

/** Rows of every file by status (v_files' counts summed: they add up to the rows). */
export function rowsByStatus(
  db: Journal,
): Record<'accepted' | 'failed' | 'unknown' | 'invalid' | 'duplicate' | 'pending', number> {
  return sql(
    db,
    `SELECT coalesce(sum(accepted), 0) AS accepted, coalesce(sum(failed), 0) AS failed, coalesce(sum(unknown), 0) AS unknown,
       coalesce(sum(invalid), 0) AS invalid, coalesce(sum(duplicates), 0) AS duplicate, coalesce(sum(pending), 0) AS pending FROM v_files`,
  ).get() as Record<
    'accepted' | 'failed' | 'unknown' | 'invalid' | 'duplicate' | 'pending',
    number
  >;
}

/**
 * Numbers with an outcome since the journal began, by outcome and provider status code ('' without
 * one): those of files still held, and pruned files' (pruned_totals). A number resent by `smsdrop
 * retry` counts once per outcome it got: a retried batch keeps its own (failed: never sent;
 * unknown: maybe sent). Never goes down.
 */
export function numbersByOutcome(
  db: Journal,
): Array<{ outcome: string; code: string; numbers: number }> {
  return sql(
    db,
    `SELECT outcome, code, sum(n) AS numbers FROM (
       SELECT ${SETTLED_AS} AS outcome, coalesce(status_code, '') AS code, sum(numbers) AS n
         FROM batches WHERE state IN ${sqlList(SETTLED_STATES)} AND ${NOT_PRUNED}
         GROUP BY outcome, status_code
       UNION ALL
       SELECT outcome, code, count AS n FROM pruned_totals WHERE kind = 'numbers')
     GROUP BY outcome, code ORDER BY outcome, code`,
  ).all() as Array<{ outcome: string; code: string; numbers: number }>;
}

/** Requests answered (or given up on) since the journal began, by outcome. Never goes down. */
export function requestsByOutcome(db: Journal): Array<{ outcome: string; requests: number }> {
  return sql(
    db,
    `SELECT outcome, sum(n) AS requests FROM (
       SELECT a.outcome, count(*) AS n FROM attempts a JOIN batches b ON b.id = a.batch_id
         WHERE a.outcome IS NOT NULL AND ${NOT_PRUNED} GROUP BY a.outcome
       UNION ALL
       SELECT outcome, count AS n FROM pruned_totals WHERE kind = 'requests')
     GROUP BY outcome ORDER BY outcome`,
  ).all() as Array<{ outcome: string; requests: number }>;
}

/**
 * A batch (alias b, or batches) of a file not marked pruned: a pruned file's records, on their way
 * out, are counted in pruned_totals already.
 */
const NOT_PRUNED = `file_id NOT IN (SELECT id FROM files WHERE pruned_at IS NOT NULL)`;

/** Per minute since `since` (ISO): requests answered and the numbers accepted by them. */
export function sendRateByMinute(
  db: Journal,
  since: string,
): Array<{ minute: string; requests: number; accepted: number }> {
  return sql(
    db,
    `SELECT substr(a.finished_at, 1, 16) AS minute, count(*) AS requests,
       coalesce(sum(CASE WHEN a.outcome = 'accepted' THEN b.numbers END), 0) AS accepted
     FROM attempts a JOIN batches b ON b.id = a.batch_id
     WHERE a.finished_at >= ? GROUP BY minute ORDER BY minute`,
  ).all(since) as Array<{ minute: string; requests: number; accepted: number }>;
}
