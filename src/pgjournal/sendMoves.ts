// The writes around each request on the PostgreSQL journal: the attempt before it, the outcome
// after it, as the journal rules say (src/journalRules/outcomes.ts), each move also checked against
// the batch's lease (rules.ts, claims.ts):
//   - an attempt starts only for a batch still planned under the same req_id whose lease this
//     node holds and has not passed;
//   - an outcome is written only while the batch is still this node's (lease_node) and, for an
//     attempt's outcome, that attempt is still the batch's newest (the claim's epoch), and gives
//     the lease up in the same statement.
// A move the batch no longer answers to throws before the write has changed anything, so that
// the turn's other writes commit (writeQueue.ts).
import type pg from 'pg';
import * as rules from '../journalRules/outcomes.js';
import type { AttemptResult, BatchRecord, Transition } from '../ports/records.js';
import { claimContext, heldBy, runRule } from './rules.js';

type Db = pg.PoolClient;

/**
 * The attempt, before its request leaves (src/journalRules/outcomes.ts, startAttempt): undefined
 * when the batch is no longer planned under the same req_id, its file is not free to go, or this
 * node's lease of it is gone.
 */
export function startAttempt(
  db: Db,
  node: string,
  batch: Pick<BatchRecord, 'id' | 'req_id'>,
  reqId: string | null,
): Promise<number | undefined> {
  const now = new Date().toISOString();
  return runRule(db, rules.startAttempt(claimContext(node), batch, reqId, now, node));
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
  return runRule(
    db,
    rules.finishAttempt(heldBy(node, attempt.id), attempt, batchId, transition, now),
  );
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
