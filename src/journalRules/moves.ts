// The one way a batch changes state (moveBatch), checked against the state machine
// (ports/states.ts, BATCH_MOVES), on either journal.
import { SmsdropError } from '../errors.js';
import { BATCH_MOVES, BATCH_STATE, type BatchState, sqlList } from '../ports/states.js';
import { type Dialect, type Fragment, get, type Param, type Rule, run } from './rule.js';

/** A change of state that BATCH_MOVES does not allow: a bug, never an input's fault. */
export class IllegalTransitionError extends SmsdropError {
  constructor(batchId: number, from: BatchState, to: BatchState) {
    super('E_BATCH_TRANSITION', `batch ${batchId} cannot go from ${from} to ${to}`);
  }
}

/**
 * A move the journal's guard refused (PostgreSQL: another node holds the batch now, or took it
 * over). Not a bug: the batch is someone else's to finish; a node that lost it hands it on.
 */
export class MoveRefusedError extends SmsdropError {
  constructor(message: string) {
    super('E_BATCH_TRANSITION', message);
  }
}

/** For each state, the states a batch may come from to reach it (BATCH_MOVES read backwards). */
const STATES = Object.values(BATCH_STATE);
export const MOVES_INTO: Readonly<Record<BatchState, readonly BatchState[]>> = Object.fromEntries(
  STATES.map((to) => [to, STATES.filter((from) => BATCH_MOVES[from].includes(to))]),
) as Record<string, BatchState[]> as Record<BatchState, BatchState[]>;

/** MOVES_INTO as SQL lists, made once: a move's text is built on every request. */
const MOVES_INTO_SQL = Object.fromEntries(
  STATES.map((to) => [to, sqlList(MOVES_INTO[to])]),
) as Record<BatchState, string>;

/** The batch as a move that changed nothing reads it, to say why. */
export interface CurrentBatch {
  state: BatchState;
  req_id: string;
  [column: string]: unknown;
}

/**
 * What a journal adds to the moves it makes (PostgreSQL's lease: a node moves only a batch it
 * holds, and gives the lease up with the move).
 */
export interface MoveGuard {
  /** A condition on the batch, with its parameters. */
  where?: Fragment;
  /** Columns set with every move, with their parameters. */
  set?: Fragment;
  /** The batch's columns `refused` reads ('lease_node'). */
  columns?: string;
  /** Why `where` refused this batch, or undefined when it did not. */
  refused?(batchId: number, to: BatchState, current: CurrentBatch): string | undefined;
}

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
  now: string;
  /** How the journal stores `now` (Dialect.storedTime). */
  dialect: Dialect;
  guard?: MoveGuard;
}

/** The assignments as SQL (`, a = ?, b = ?`) and their parameters, in order. */
function spliced(assignments: readonly Fragment[], extra: Fragment | undefined): [string, Param[]] {
  let text = '';
  const params: Param[] = [];
  for (const fragment of extra ? [...assignments, extra] : assignments) {
    text += `, ${fragment[0]}`;
    for (let i = 1; i < fragment.length; i++) params.push(fragment[i] as Param);
  }
  return [text, params];
}

/**
 * The one way a batch changes state: one UPDATE that moves it only from a state BATCH_MOVES allows
 * (and, for a claim, only from `onlyFrom` and only while it has `reqId`; and only where the
 * journal's guard holds). So two writers racing for the same move cannot both make it: the loser's
 * UPDATE changes nothing, and only then is the batch read, to say why. Returns false only for a
 * claim the batch no longer answers to; any other move that changed nothing throws
 * (E_BATCH_TRANSITION, E_BATCH_MISSING).
 */
export function* moveBatch(
  batchId: number,
  to: BatchState,
  assignments: readonly Fragment[],
  options: MoveOptions,
): Rule<boolean> {
  return (yield* moveBatchReturning(batchId, to, assignments, options, '')) !== false;
}

/**
 * moveBatch, answering with the moved batch's `columns` (read by the move's own UPDATE, so that
 * what a rule needs of the batch next costs no statement of its own); false where moveBatch
 * answers false.
 */
export function* moveBatchReturning<R extends object>(
  batchId: number,
  to: BatchState,
  assignments: readonly Fragment[],
  options: MoveOptions,
  columns: string,
): Rule<R | false> {
  const [text, ...params] = moveStatement(batchId, to, assignments, options);
  if (columns === '') {
    if ((yield* run(text, ...params)) > 0) return {} as R;
  } else {
    const moved = yield* get<R>(`${text} RETURNING ${columns}`, ...params);
    if (moved) return moved;
  }
  return yield* notMoved(batchId, to, options);
}

/**
 * moveBatch with a write that goes with the move, made only if the batch moved: `then` reads the
 * moved batch's id as `moved.id` (`INSERT … SELECT … FROM moved RETURNING …`), and its row is the
 * answer; false where moveBatch answers false. Where the journal's WITH may hold an UPDATE
 * (Dialect.writesInWith) the two are one statement: a PostgreSQL request waits for one round trip
 * less before it leaves.
 */
export function* moveBatchThen<R extends object>(
  batchId: number,
  to: BatchState,
  assignments: readonly Fragment[],
  options: MoveOptions,
  then: Fragment,
): Rule<R | false> {
  const [text, ...params] = moveStatement(batchId, to, assignments, options);
  const [thenText, ...thenParams] = then;
  if (options.dialect.writesInWith) {
    const row = yield* get<R>(
      `WITH moved AS (${text} RETURNING id) ${thenText}`,
      ...params,
      ...thenParams,
    );
    if (row) return row;
  } else if ((yield* run(text, ...params)) > 0) {
    const row = yield* get<R>(
      `WITH moved AS (SELECT CAST(? AS INTEGER) AS id) ${thenText}`,
      batchId,
      ...thenParams,
    );
    if (row) return row;
    throw new SmsdropError(
      'E_INTERNAL',
      `batch ${batchId} moved to ${to}, and its write after the move wrote nothing`,
    );
  }
  return yield* notMoved(batchId, to, options);
}

/**
 * The move's UPDATE: only from a state BATCH_MOVES allows, and only where the claim's and the
 * guard's conditions hold.
 */
function moveStatement(
  batchId: number,
  to: BatchState,
  assignments: readonly Fragment[],
  options: MoveOptions,
): Fragment {
  const { guard } = options;
  const [set, setParams] = spliced(assignments, guard?.set);
  const where = [
    options.onlyFrom ? ` AND state IN ${sqlList(options.onlyFrom)}` : '',
    options.reqId === undefined ? '' : ' AND req_id = ?',
    guard?.where ? ` AND ${guard.where[0]}` : '',
  ].join('');
  const whereParams = [
    ...(options.reqId === undefined ? [] : [options.reqId]),
    ...(guard?.where?.slice(1) ?? []),
  ] as Param[];
  const text = `UPDATE batches SET state = ?, updated_at = ${options.dialect.storedTime('?')}${set} WHERE id = ? AND state IN ${MOVES_INTO_SQL[to]}${where}`;
  return [text, to, options.now, ...setParams, batchId, ...whereParams];
}

/**
 * A move that changed nothing, read afterwards to say why: false for a claim the batch no longer
 * answers to (or that only the guard refused); else it throws.
 */
function* notMoved(batchId: number, to: BatchState, options: MoveOptions): Rule<false> {
  const { guard } = options;
  const claim = options.onlyFrom !== undefined || options.reqId !== undefined;
  const current = yield* get<CurrentBatch>(
    `SELECT state, req_id${guard?.columns ? `, ${guard.columns}` : ''} FROM batches WHERE id = ?`,
    batchId,
  );
  if (claim && (!current || !answersClaim(current, options))) return false;
  if (!current) throw new SmsdropError('E_BATCH_MISSING', `batch ${batchId} is not in the journal`);
  const refused = guard?.refused?.(batchId, to, current);
  if (refused !== undefined) {
    if (claim) return false;
    throw new MoveRefusedError(refused);
  }
  // A claim its state allowed was refused by the guard alone (a lease that passed).
  if (claim && MOVES_INTO[to].includes(current.state)) return false;
  throw new IllegalTransitionError(batchId, current.state, to);
}

function answersClaim(current: CurrentBatch, options: MoveOptions): boolean {
  if (options.reqId !== undefined && current.req_id !== options.reqId) return false;
  return options.onlyFrom === undefined || options.onlyFrom.includes(current.state);
}
