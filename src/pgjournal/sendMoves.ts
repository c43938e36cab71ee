// The writes around each request on the PostgreSQL journal: the attempt before it, the outcome
// after it, as the journal rules say (src/journalRules/outcomes.ts), each move also checked against
// the batch's lease (rules.ts, claims.ts):
//   - an attempt starts only for a batch still planned under the same req_id whose lease this
//     node holds and has not passed;
//   - an outcome is written only while the batch is still this node's (lease_node), and gives the
//     lease up in the same statement.
// A move the batch no longer answers to throws before the write has changed anything, so that
// the turn's other writes commit (writeQueue.ts).
import type pg from 'pg';
import { moveBatch } from '../journalRules/moves.js';
import * as rules from '../journalRules/outcomes.js';
import type { AttemptResult, BatchRecord, Transition } from '../ports/records.js';
import { BATCH_STATE } from '../ports/states.js';
import { claimGuard, heldBy, runRule } from './rules.js';

type Db = pg.PoolClient;

/**
 * The attempt, before its request leaves (see src/journal/sendMoves.ts, startAttempt): undefined
 * when the batch is no longer planned under the same req_id, or this node's lease of it is gone.
 */
export async function startAttempt(
  db: Db,
  node: string,
  batch: Pick<BatchRecord, 'id' | 'req_id'>,
  reqId: string | null,
): Promise<number | undefined> {
  const now = new Date().toISOString();
  const claim = moveBatch(batch.id, BATCH_STATE.sending, [['attempts = attempts + 1']], {
    onlyFrom: [BATCH_STATE.planned],
    reqId: batch.req_id,
    now,
    guard: claimGuard(node),
  });
  if (!(await runRule(db, claim))) return undefined;
  const { rows } = await db.query<{ id: number }>(
    'INSERT INTO attempts (batch_id, req_id, started_at) VALUES ($1, $2, $3) RETURNING id',
    [batch.id, reqId, now],
  );
  return rows[0]!.id;
}

/** The attempt's outcome and where its batch goes. */
export function finishAttempt(
  db: Db,
  node: string,
  attempt: { id: number; result: AttemptResult },
  batchId: number,
  transition: Transition,
): Promise<void> {
  const now = new Date().toISOString();
  return runRule(db, rules.finishAttempt(heldBy(node), attempt, batchId, transition, now));
}

/** Where a batch goes, with no attempt to close. */
export function applyTransition(
  db: Db,
  node: string,
  batchId: number,
  t: Transition,
): Promise<void> {
  return runRule(db, rules.applyTransition(heldBy(node), batchId, t, new Date().toISOString()));
}
