// What a batch's attempts, and everyone's recent attempts, say: whether a batch may have reached
// the provider, and what a message window has used up (send/).
import type { Journal } from './connection.js';
import { sql, sqlRaw } from './sql.js';
import { SQLITE_DIALECT } from './rules.js';
import type { AttemptHistory } from '../ports/records.js';

/**
 * SQL on an attempt's outcome: it may have reached the provider, without its word on what became of
 * it.
 */
const MAY_HAVE_ARRIVED =
  "outcome IS NULL OR outcome IN ('in-doubt', 'interrupted', 'rejected:ambiguous')";

export function attemptHistory(db: Journal, batchId: number, reqId: string): AttemptHistory {
  const row = sql(
    db,
    `SELECT coalesce(sum((req_id IS NULL OR req_id <> ?) AND (${MAY_HAVE_ARRIVED})), 0) AS withoutReqId,
       coalesce(sum(outcome = 'rejected:ambiguous'), 0) AS ambiguous,
       ${SQLITE_DIALECT.timeText(`min(CASE WHEN ${MAY_HAVE_ARRIVED} THEN started_at END)`)} AS firstDoubtAt
     FROM attempts WHERE batch_id = ?`,
  ).get(reqId, batchId) as { withoutReqId: number; ambiguous: number; firstDoubtAt: string | null };
  return {
    everyAttemptCarriedReqId: row.withoutReqId === 0,
    partial: row.ambiguous > 0,
    firstDoubtAt: row.firstDoubtAt,
  };
}

/**
 * Attempts started after `sinceMs` (ms since the epoch) that may have sent their numbers, each with
 * its batch's count: what a message window (send/rate.ts) has used up before this process began.
 * Left out: requests the provider cannot have sent (never written, or refused as a whole).
 */
export function recentStarts(db: Journal, sinceMs: number): { at: number; numbers: number }[] {
  const rows = sqlRaw(
    db,
    `SELECT ${SQLITE_DIALECT.timeText('a.started_at')}, b.numbers
     FROM attempts a INDEXED BY attempts_by_start JOIN batches b ON b.id = a.batch_id
     WHERE a.started_at > ${SQLITE_DIALECT.storedTime('?')}
       AND (outcome IN ('accepted', 'rejected:duplicate-request') OR ${MAY_HAVE_ARRIVED})`,
  ).all(new Date(sinceMs).toISOString()) as [string, number][];
  return rows.map(([startedAt, numbers]) => ({ at: Date.parse(startedAt), numbers }));
}
