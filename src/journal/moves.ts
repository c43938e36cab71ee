// The one way a batch changes state (moveBatch), checked against the state machine (states.ts).
import type { Journal } from './connection.js';
import { SmsdropError } from '../errors.js';
import { nowIso, sql, sqlRaw } from './sql.js';
import { BATCH_MOVES, BATCH_STATE, type BatchState, sqlList } from '../ports/states.js';

/** A change of state that BATCH_MOVES (states.ts) does not allow: a bug, never an input's fault. */
export class IllegalTransitionError extends SmsdropError {
  constructor(batchId: number, from: BatchState, to: BatchState) {
    super('E_BATCH_TRANSITION', `batch ${batchId} cannot go from ${from} to ${to}`);
  }
}

/** One column set by a move, as SQL with its parameters: ['next_attempt_at = ?', 0]. */
export type Assignment = readonly [sql: string, ...params: (string | number | null)[]];

export interface MoveOptions {
  /**
   * A claim: the move happens only from these states (else false); what another run moved is its
   * own.
   */
  onlyFrom?: readonly BatchState[];
  /**
   * A claim of the batch as it was read: a row id reused by another batch (other req_id) is not it.
   */
  reqId?: string;
  now?: string;
}

/** For each state, the states a batch may come from to reach it (BATCH_MOVES read backwards). */
const MOVES_INTO = Object.fromEntries(
  Object.values(BATCH_STATE).map((to) => [
    to,
    sqlList(Object.values(BATCH_STATE).filter((from) => BATCH_MOVES[from].includes(to))),
  ]),
) as Record<BatchState, string>;

/**
 * The one way a batch changes state: one UPDATE that moves it only from a state BATCH_MOVES allows
 * (and, for a claim, only from `onlyFrom` and only while it has `reqId`). So two writers racing
 * for the same move cannot both make it: the loser's UPDATE changes nothing, and only then is the
 * batch read, to say why. Returns false only for a claim (onlyFrom, reqId) the batch no longer
 * answers to; any other move that changed nothing throws (E_BATCH_TRANSITION, E_BATCH_MISSING).
 */
export function moveBatch(
  db: Journal,
  batchId: number,
  to: BatchState,
  assignments: readonly Assignment[] = [],
  options: MoveOptions = {},
): boolean {
  const set = assignments.map(([text]) => `, ${text}`).join('');
  const params = assignments.flatMap(([, ...values]) => values);
  const claimedFrom = options.onlyFrom ? ` AND state IN ${sqlList(options.onlyFrom)}` : '';
  const claimedReqId = options.reqId === undefined ? '' : ' AND req_id = ?';
  const changed = sql(
    db,
    `UPDATE batches SET state = ?, updated_at = ?${set} WHERE id = ? AND state IN ${MOVES_INTO[to]}${claimedFrom}${claimedReqId}`,
  ).run(
    to,
    options.now ?? nowIso(),
    ...params,
    batchId,
    ...(options.reqId === undefined ? [] : [options.reqId]),
  ).changes;
  if (changed > 0) return true;
  const current = sqlRaw(db, 'SELECT state, req_id FROM batches WHERE id = ?').get(batchId) as
    [BatchState, string] | undefined;
  const claim = options.onlyFrom !== undefined || options.reqId !== undefined;
  if (
    claim &&
    (!current ||
      (options.reqId !== undefined && current[1] !== options.reqId) ||
      (options.onlyFrom !== undefined && !options.onlyFrom.includes(current[0])))
  )
    return false;
  if (!current) throw new SmsdropError('E_BATCH_MISSING', `batch ${batchId} is not in the journal`);
  throw new IllegalTransitionError(batchId, current[0], to);
}
