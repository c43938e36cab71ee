// MetricsReads on the PostgreSQL journal: the figures of /metrics, the dashboard and the progress
// line (src/journal/metricsReads.ts on SQLite, the same statements). A sum of bigint is numeric in
// PostgreSQL, which node-postgres gives as a string: those are cast back to bigint (a number).
import type { FileWaiting, MetricsReads } from '../ports/reads.js';
import {
  FILE_CONTROL,
  FILE_STATUS,
  SETTLED_AS,
  SETTLED_STATES,
  sqlList,
  UNSETTLED_STATES,
} from '../ports/states.js';
import { all, BYTES, first, type Queryable, value } from './readsQuery.js';

type RowCounts = Awaited<ReturnType<MetricsReads['rowsByStatus']>>;

/** A batch (batches, unaliased) of a file not marked pruned: pruned_totals counts those. */
const NOT_PRUNED = 'file_id NOT IN (SELECT id FROM files WHERE pruned_at IS NOT NULL)';

const sumOf = (column: string, as: string) => `coalesce(sum(${column}), 0)::bigint AS ${as}`;

/** MetricsReads of the PostgreSQL journal on `db`. */
export function pgMetricsReads(db: Queryable): MetricsReads {
  return {
    numbersToSend: async (sha256s) => {
      if (sha256s !== undefined && sha256s.length === 0) return 0;
      const ofFiles =
        sha256s === undefined
          ? ''
          : `AND file_id IN (SELECT id FROM files WHERE sha256 = ANY($1::text[]) AND status = '${FILE_STATUS.sending}')`;
      return (await value<number>(
        db,
        `SELECT coalesce(sum(numbers), 0) FROM batches WHERE state IN ${sqlList(UNSETTLED_STATES)} ${ofFiles}`,
        sha256s === undefined ? [] : [sha256s],
      ))!;
    },
    filesWaiting: (now) => filesWaiting(db, now),
    filesByStatus: () =>
      all<{ status: string; files: number }>(
        db,
        `SELECT status, count(*) AS files FROM files GROUP BY status ORDER BY status ${BYTES}`,
      ),
    rowsByStatus: async () =>
      (await first<RowCounts>(
        db,
        `SELECT ${sumOf('accepted', 'accepted')}, ${sumOf('failed', 'failed')}, ${sumOf('unknown', 'unknown')},
           ${sumOf('invalid', 'invalid')}, ${sumOf('duplicates', 'duplicate')}, ${sumOf('pending', 'pending')}
         FROM v_files`,
      ))!,
    numbersByOutcome: () =>
      all<{ outcome: string; code: string; numbers: number }>(
        db,
        `SELECT outcome, code, sum(n)::bigint AS numbers FROM (
           SELECT ${SETTLED_AS} AS outcome, coalesce(status_code, '') AS code, sum(numbers) AS n
             FROM batches WHERE state IN ${sqlList(SETTLED_STATES)} AND ${NOT_PRUNED}
             GROUP BY 1, 2
           UNION ALL
           SELECT outcome, code, count AS n FROM pruned_totals WHERE kind = 'numbers') t
         GROUP BY outcome, code ORDER BY outcome ${BYTES}, code ${BYTES}`,
      ),
    requestsByOutcome: () =>
      all<{ outcome: string; requests: number }>(
        db,
        `SELECT outcome, sum(n)::bigint AS requests FROM (
           SELECT a.outcome, count(*) AS n FROM attempts a JOIN batches b ON b.id = a.batch_id
             WHERE a.outcome IS NOT NULL AND b.${NOT_PRUNED} GROUP BY a.outcome
           UNION ALL
           SELECT outcome, count AS n FROM pruned_totals WHERE kind = 'requests') t
         GROUP BY outcome ORDER BY outcome ${BYTES}`,
      ),
    sendRateByMinute: (since) =>
      all<{ minute: string; requests: number; accepted: number }>(
        db,
        `SELECT substr(a.finished_at, 1, 16) AS minute, count(*) AS requests,
           coalesce(sum(CASE WHEN a.outcome = 'accepted' THEN b.numbers END), 0) AS accepted
         FROM attempts a JOIN batches b ON b.id = a.batch_id
         WHERE a.finished_at >= $1 GROUP BY 1 ORDER BY 1`,
        [since],
      ),
  };
}

/** Unfinished files held, scheduled or paused at `now` (ports/reads.ts filesWaiting). */
function filesWaiting(
  db: Queryable,
  now: string,
): Promise<Array<{ waiting: FileWaiting; files: number }>> {
  // ordered without COLLATE "C": three lowercase words, which every collation sorts alike
  return all<{ waiting: FileWaiting; files: number }>(
    db,
    `SELECT CASE WHEN control IS NULL THEN 'scheduled' ELSE control END AS waiting, count(*) AS files
     FROM files WHERE status NOT IN ('${FILE_STATUS.done}', '${FILE_STATUS.refused}')
       AND (control IN ('${FILE_CONTROL.held}', '${FILE_CONTROL.paused}') OR (control IS NULL AND start_at > $1))
     GROUP BY 1 ORDER BY 1`,
    [now],
  );
}
