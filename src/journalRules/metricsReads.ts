// Figures of the daemon's /metrics, its dashboard and its progress line (http/, daemon/), read on
// either journal when they are asked for: nothing on the sending path keeps them. The batches and
// attempts tables are a few rows per thousand numbers.
//
// A sum of bigint is numeric in PostgreSQL, which node-postgres gives as a string: those sums are
// cast back to BIGINT, which SQLite reads as the integer its sum is already.
import type { FileWaiting } from '../ports/reads.js';
import {
  FILE_CONTROL,
  FILE_STATUS,
  SETTLED_AS,
  SETTLED_STATES,
  sqlList,
  UNSETTLED_STATES,
} from '../ports/states.js';
import { all, type Dialect, get, type Param, type Rule } from './rule.js';
import { batchCode } from './statusCodes.js';

type RowCounts = Record<
  'accepted' | 'failed' | 'unknown' | 'invalid' | 'duplicate' | 'pending',
  number
>;

/** `column`'s sum as a whole number (0 without rows), named `as`. */
const sumOf = (column: string, as: string) =>
  `CAST(coalesce(sum(${column}), 0) AS BIGINT) AS ${as}`;

/**
 * A batch (`b`) of a file not marked pruned: a pruned file's records, on their way out, are counted
 * in pruned_totals already.
 */
const NOT_PRUNED = 'b.file_id NOT IN (SELECT id FROM files WHERE pruned_at IS NOT NULL)';

/**
 * Numbers still to send: in live batches (planned or being sent), of every file or of the files
 * with these hashes still sending.
 */
export function* numbersToSend(d: Dialect, sha256s?: readonly string[]): Rule<number> {
  if (sha256s !== undefined && sha256s.length === 0) return 0;
  const params: Param[] = sha256s === undefined ? [] : [d.list(sha256s)];
  const ofFiles =
    sha256s === undefined
      ? ''
      : `AND file_id IN (SELECT id FROM files WHERE ${d.isIn('sha256')} AND status = '${FILE_STATUS.sending}')`;
  const row = yield* get<{ numbers: number }>(
    `SELECT ${sumOf('numbers', 'numbers')} FROM batches
     WHERE state IN ${sqlList(UNSETTLED_STATES)} ${ofFiles}`,
    ...params,
  );
  return row!.numbers;
}

/** Unfinished files held, scheduled or paused at `now` (ports/reads.ts filesWaiting). */
export function filesWaiting(now: string): Rule<Array<{ waiting: FileWaiting; files: number }>> {
  // ordered by no collation of its own: three lowercase words, which every collation sorts alike
  return all(
    `SELECT CASE WHEN control IS NULL THEN 'scheduled' ELSE control END AS waiting, count(*) AS files
     FROM files WHERE status NOT IN ('${FILE_STATUS.done}', '${FILE_STATUS.refused}')
       AND (control IN ('${FILE_CONTROL.held}', '${FILE_CONTROL.paused}') OR (control IS NULL AND start_at > ?))
     GROUP BY 1 ORDER BY 1`,
    now,
  );
}

/** Files of each status. */
export function filesByStatus(d: Dialect): Rule<Array<{ status: string; files: number }>> {
  return all(
    `SELECT status, count(*) AS files FROM files GROUP BY status ORDER BY status${d.byBytes}`,
  );
}

/** Rows of every file by status (v_files' counts summed: they add up to the rows). */
export function* rowsByStatus(): Rule<RowCounts> {
  const row = yield* get<RowCounts>(
    `SELECT ${sumOf('accepted', 'accepted')}, ${sumOf('failed', 'failed')}, ${sumOf('unknown', 'unknown')},
       ${sumOf('invalid', 'invalid')}, ${sumOf('duplicates', 'duplicate')}, ${sumOf('pending', 'pending')}
     FROM v_files`,
  );
  return row!;
}

/**
 * Numbers with an outcome since the journal began, by outcome and provider status code ('' without
 * one): those of files still held, and pruned files' (pruned_totals). A number resent by `smsdrop
 * retry` counts once per outcome it got: a retried batch keeps its own (failed: never sent;
 * unknown: maybe sent). Never goes down.
 */
export function numbersByOutcome(
  d: Dialect,
): Rule<Array<{ outcome: string; code: string; numbers: number }>> {
  return all(
    `SELECT outcome, code, ${sumOf('n', 'numbers')} FROM (
       SELECT ${SETTLED_AS} AS outcome, coalesce(${batchCode('b')}, '') AS code, sum(numbers) AS n
         FROM batches b WHERE state IN ${sqlList(SETTLED_STATES)} AND ${NOT_PRUNED}
         GROUP BY 1, 2
       UNION ALL
       SELECT outcome, code, count AS n FROM pruned_totals WHERE kind = 'numbers') t
     GROUP BY outcome, code ORDER BY outcome${d.byBytes}, code${d.byBytes}`,
  );
}

/** Requests answered (or given up on) since the journal began, by outcome. Never goes down. */
export function requestsByOutcome(d: Dialect): Rule<Array<{ outcome: string; requests: number }>> {
  return all(
    `SELECT outcome, ${sumOf('n', 'requests')} FROM (
       SELECT a.outcome, count(*) AS n FROM attempts a JOIN batches b ON b.id = a.batch_id
         WHERE a.outcome IS NOT NULL AND ${NOT_PRUNED} GROUP BY a.outcome
       UNION ALL
       SELECT outcome, count AS n FROM pruned_totals WHERE kind = 'requests') t
     GROUP BY outcome ORDER BY outcome${d.byBytes}`,
  );
}

/** Per minute since `since` (ISO): requests answered and the numbers accepted by them. */
export function sendRateByMinute(
  d: Dialect,
  since: string,
): Rule<Array<{ minute: string; requests: number; accepted: number }>> {
  return all(
    `SELECT substr(${d.timeText('a.finished_at')}, 1, 16) AS minute, count(*) AS requests,
       ${sumOf("CASE WHEN a.outcome = 'accepted' THEN b.numbers END", 'accepted')}
     FROM attempts a JOIN batches b ON b.id = a.batch_id
     WHERE a.finished_at >= ${d.storedTime('?')} GROUP BY 1 ORDER BY 1`,
    since,
  );
}
