// Batches left `sending` with nobody to finish them: their attempt was written, their request may
// have left, and no outcome came (a crash, a forced exit, a node whose lease passed). Each journal
// finds them its own way (SQLite at start-up; PostgreSQL also while it sends, once their node's
// lease has passed); this is what becomes of them. With reqId on they go back to planned under the
// same reqId (the provider refuses a reqId it has seen that day: 160054, counted as accepted), in
// doubt since their request left; with reqId off they end unknown, never resent automatically.
import type { Transition } from '../ports/records.js';
import { applyTransition, type RuleContext } from './outcomes.js';
import { get, type Rule, run } from './rule.js';

export const INTERRUPTED_REASON = 'the program stopped before the outcome was recorded';

const RETRIED: Transition = {
  to: 'planned',
  nextAttemptAt: 0,
  doubt: 1,
  statusCode: null,
  statusMsg: 'interrupted mid-request; retried with the same reqId',
};
const UNKNOWN: Transition = {
  to: 'unknown',
  statusCode: null,
  statusMsg: 'interrupted mid-request: it may have been sent; not resent because reqId is off',
};

/** Closes the batches' open attempts as interrupted and moves each batch on (see the top). */
export function* recoverInterrupted(
  ctx: RuleContext,
  batchIds: readonly number[],
  reqIdOn: boolean,
  now: string,
): Rule<void> {
  for (const batchId of batchIds) {
    const open = yield* get<{ left_at: string | null }>(
      `SELECT ${ctx.dialect.timeText('min(started_at)')} AS left_at FROM attempts
       WHERE batch_id = ? AND finished_at IS NULL`,
      batchId,
    );
    yield* run(
      `UPDATE attempts SET finished_at = ${ctx.dialect.storedTime('?')}, outcome = 'interrupted', reason = ?
       WHERE batch_id = ? AND finished_at IS NULL`,
      now,
      INTERRUPTED_REASON,
      batchId,
    );
    yield* applyTransition(ctx, batchId, reqIdOn ? RETRIED : UNKNOWN, now, open?.left_at ?? now);
  }
}
