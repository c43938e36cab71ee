// An attempt's record: how it keeps the req_id it carried, and what a batch's attempts say of
// whether the provider may have its numbers already (send/, retry).
import type { AttemptHistory } from '../ports/records.js';
import { type Dialect, get, type Rule } from './rule.js';

/**
 * attempts.req_id of an attempt that carried its batch's own req_id. A batch keeps one req_id for
 * life (every move names it), so the attempt does not keep its 16 characters a second time. null
 * is an attempt that carried none; an attempt in an older journal keeps the req_id itself.
 */
export const BATCH_REQ_ID = '';

/** What attempts.req_id keeps of the req_id an attempt of the batch carried. */
export function storedAttemptReqId(reqId: string | null, batchReqId: string): string | null {
  return reqId === batchReqId ? BATCH_REQ_ID : reqId;
}

/**
 * SQL on an attempt's outcome: it may have reached the provider, without its word on what became of
 * it.
 */
export const MAY_HAVE_ARRIVED =
  "outcome IS NULL OR outcome IN ('in-doubt', 'interrupted', 'rejected:ambiguous')";

/**
 * What the batch's attempts say: whether each that may have reached the provider carried the
 * batch's req_id `reqId` (so that the provider would refuse it again as a repeat), whether one
 * was answered as ambiguous, and when the first that may have arrived started.
 */
export function* attemptHistory(d: Dialect, batchId: number, reqId: string): Rule<AttemptHistory> {
  const carriedOther = `req_id IS NULL OR (req_id <> '${BATCH_REQ_ID}' AND req_id <> ?)`;
  const row = yield* get<{
    without_req_id: number | string;
    ambiguous: number | string;
    first_doubt_at: string | null;
  }>(
    `SELECT count(CASE WHEN (${carriedOther}) AND (${MAY_HAVE_ARRIVED}) THEN 1 END) AS without_req_id,
       count(CASE WHEN outcome = 'rejected:ambiguous' THEN 1 END) AS ambiguous,
       ${d.timeText(`min(CASE WHEN ${MAY_HAVE_ARRIVED} THEN started_at END${d.byBytes})`)} AS first_doubt_at
     FROM attempts WHERE batch_id = ?`,
    reqId,
    batchId,
  );
  return {
    everyAttemptCarriedReqId: Number(row!.without_req_id) === 0,
    partial: Number(row!.ambiguous) > 0,
    firstDoubtAt: row!.first_doubt_at,
  };
}
