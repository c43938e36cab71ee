// The writes around each request on the PostgreSQL journal: the attempt before it, the outcome
// after it, each batch move checked against the state machine (ports/states.ts) as SQLite's
// moveBatch (src/journal/moves.ts) does, and against the batch's lease (claims.ts):
//   - an attempt starts only for a batch still planned under the same req_id whose lease this
//     node holds and has not passed (leaseHeld);
//   - an outcome is written only while the batch is still this node's (lease_node), and gives the
//     lease up in the same statement. A lease that passed unnoticed by anyone is still the
//     node's: nobody else has moved the batch. One another node took over is not.
// A move the batch no longer answers to throws before the write has changed anything, so that
// the turn's other writes commit (sendQueue.ts).
import { randomUUID } from 'node:crypto';
import type pg from 'pg';
import { SmsdropError } from '../errors.js';
import { describeStatusCode, SUPPRESSING_CODES } from '../provider/codes.js';
import type { AttemptResult, BatchRecord, Transition } from '../ports/records.js';
import { BATCH_MOVES, BATCH_STATE, type BatchState, sqlList } from '../ports/states.js';
import { LEASE_RELEASED, leaseHeld } from './claims.js';

type Db = pg.PoolClient;
type Param = string | number | boolean | null;
/** One column set by a move: SQL with `?` for each of its parameters, then the parameters. */
type Assignment = readonly [sql: string, ...params: Param[]];

/** For each state, the states a batch may come from to reach it (BATCH_MOVES read backwards). */
const MOVES_INTO = Object.fromEntries(
  Object.values(BATCH_STATE).map((to) => [
    to,
    sqlList(Object.values(BATCH_STATE).filter((from) => BATCH_MOVES[from].includes(to))),
  ]),
) as Record<BatchState, string>;

interface Move {
  node: string;
  now: string;
  /** A claim (startAttempt): only from planned, only under this req_id, only under a live lease. */
  claimReqId?: string;
}

/**
 * Moves a batch (one UPDATE). A claim returns false when the batch no longer answers to it; any
 * other move that changed nothing throws E_BATCH_TRANSITION (or E_BATCH_MISSING).
 */
async function moveBatch(
  db: Db,
  batchId: number,
  to: BatchState,
  assignments: readonly Assignment[],
  move: Move,
): Promise<boolean> {
  const params: Param[] = [to, move.now, batchId, move.node];
  const place = (text: string): string => text.replace(/\?/g, () => `$${params.length + 1}`);
  let set = '';
  for (const [text, ...values] of assignments) {
    // each `?` numbered in turn as its value is pushed
    set += `, ${text.replace(/\?/g, () => `$${params.push(values.shift() ?? null)}`)}`;
  }
  const claim = move.claimReqId !== undefined;
  const guard = claim
    ? ` AND state = 'planned' AND req_id = ${place('?')} AND ${leaseHeld('$4')}`
    : ` AND lease_node = $4`;
  if (claim) params.push(move.claimReqId!);
  const { rowCount } = await db.query(
    `UPDATE batches SET state = $1, updated_at = $2${set}${claim ? '' : `, ${LEASE_RELEASED}`}
     WHERE id = $3 AND state IN ${MOVES_INTO[to]}${guard}`,
    params,
  );
  if (rowCount) return true;
  if (claim) return false;
  const { rows } = await db.query<{ state: BatchState; lease_node: string | null }>(
    'SELECT state, lease_node FROM batches WHERE id = $1',
    [batchId],
  );
  const current = rows[0];
  if (!current) throw new SmsdropError('E_BATCH_MISSING', `batch ${batchId} is not in the journal`);
  if (current.lease_node !== move.node)
    throw new SmsdropError(
      'E_BATCH_TRANSITION',
      `batch ${batchId} cannot go to ${to}: node ${move.node} no longer holds it (${current.state}, ${current.lease_node === null ? 'no lease' : `leased to ${current.lease_node}`}); its lease passed and it was taken over`,
    );
  throw new SmsdropError(
    'E_BATCH_TRANSITION',
    `batch ${batchId} cannot go from ${current.state} to ${to}`,
  );
}

/**
 * The attempt, before its request leaves (see src/journal/batches.ts, startAttempt): undefined
 * when the batch is no longer planned under the same req_id, or this node's lease of it is gone.
 */
export async function startAttempt(
  db: Db,
  node: string,
  batch: Pick<BatchRecord, 'id' | 'req_id'>,
  reqId: string | null,
): Promise<number | undefined> {
  const now = new Date().toISOString();
  const moved = await moveBatch(db, batch.id, 'sending', [['attempts = attempts + 1']], {
    node,
    now,
    claimReqId: batch.req_id,
  });
  if (!moved) return undefined;
  const { rows } = await db.query<{ id: number }>(
    'INSERT INTO attempts (batch_id, req_id, started_at) VALUES ($1, $2, $3) RETURNING id',
    [batch.id, reqId, now],
  );
  return rows[0]!.id;
}

/** The attempt's outcome and where its batch goes (src/journal/batches.ts, finishAttempt). */
export async function finishAttempt(
  db: Db,
  node: string,
  attempt: { id: number; result: AttemptResult },
  batchId: number,
  transition: Transition,
): Promise<void> {
  const now = new Date().toISOString();
  const { rows } = await db.query<{ started_at: string }>(
    'SELECT started_at FROM attempts WHERE id = $1',
    [attempt.id],
  );
  // Doubt starts when the request left: the day the provider's reqId memory counts from.
  await applyTransition(db, node, batchId, transition, now, rows[0]?.started_at ?? now);
  const { result } = attempt;
  await db.query(
    'UPDATE attempts SET finished_at = $1, outcome = $2, status_code = $3, reason = $4 WHERE id = $5',
    [now, result.outcome, result.statusCode, result.reason, attempt.id],
  );
}

const statusOf = (code: string | null, msg: string | null): Assignment => [
  'status_code = ?, status_msg = ?',
  code,
  msg,
];

/** Where a batch goes (src/journal/batches.ts, applyTransition); the move comes first. */
export async function applyTransition(
  db: Db,
  node: string,
  batchId: number,
  t: Transition,
  now = new Date().toISOString(),
  doubtSince = now,
): Promise<void> {
  const move: Move = { node, now };
  switch (t.to) {
    case 'accepted':
      await moveBatch(
        db,
        batchId,
        'accepted',
        [
          statusOf(t.statusCode, t.statusMsg ?? null),
          ['sms_message_sid = ?', t.smsMessageSid],
          ['date_created = ?', t.dateCreated],
        ],
        move,
      );
      return unsuppressIfAccepted(db, batchId);
    case 'failed':
    case 'unknown':
      await moveBatch(db, batchId, t.to, [statusOf(t.statusCode, t.statusMsg)], move);
      if (t.to === 'failed') await suppressIfRefused(db, batchId, t.statusCode, now);
      return;
    case 'planned':
      await moveBatch(db, batchId, 'planned', plannedAgain(t, doubtSince), move);
      return;
    case 'split':
      await moveBatch(db, batchId, 'split', [statusOf(t.statusCode, t.statusMsg)], move);
      return splitBatch(db, batchId, now);
  }
}

function plannedAgain(t: Extract<Transition, { to: 'planned' }>, doubtSince: string): Assignment[] {
  return [
    ['next_attempt_at = ?::bigint', t.nextAttemptAt],
    statusOf(t.statusCode, t.statusMsg),
    ['maybe_sent = greatest(maybe_sent, ?::integer)', t.doubt],
    [
      'first_doubt_at = CASE WHEN ?::integer > 0 AND first_doubt_at IS NULL THEN ?::text ELSE first_doubt_at END',
      t.doubt,
      doubtSince,
    ],
    ['deferrals = deferrals + ?::integer', t.deferral ? 1 : 0],
    [
      'attempts = CASE WHEN ?::boolean THEN 0 ELSE attempts - ?::integer END',
      t.resetAttempts ?? false,
      t.refundAttempt ? 1 : 0,
    ],
  ];
}

/** Number-rejected: the (already split) batch's numbers go to two new planned halves. */
async function splitBatch(db: Db, batchId: number, now: string): Promise<void> {
  const { rows } = await db.query<{ file_id: number; group_id: number; phones: string }>(
    'SELECT b.file_id, b.group_id, n.phones FROM batches b JOIN batch_numbers n ON n.batch_id = b.id WHERE b.id = $1',
    [batchId],
  );
  const parent = { id: batchId, ...rows[0]! };
  const phones = parent.phones.split(',');
  const middle = Math.ceil(phones.length / 2);
  for (const half of [phones.slice(0, middle), phones.slice(middle)])
    if (half.length > 0) await moveToNewBatch(db, parent, half, now);
}

/**
 * A new planned batch (fresh reqId) for some of a batch's numbers; their rows follow them (as
 * src/journal/batches.ts, moveToNewBatch: a split's halves, a retry's new batches).
 */
export async function moveToNewBatch(
  db: Pick<pg.ClientBase, 'query'>,
  from: Pick<BatchRecord, 'id' | 'file_id' | 'group_id'>,
  phones: string[],
  now: string,
): Promise<number> {
  const { rows } = await db.query<{ id: number }>(
    `INSERT INTO batches (file_id, group_id, parent_id, req_id, numbers, state, created_at, updated_at)
     VALUES ($1, $2, $3, $4, $5, 'planned', $6, $6) RETURNING id`,
    [from.file_id, from.group_id, from.id, newReqId(), phones.length, now],
  );
  const childId = rows[0]!.id;
  await db.query('INSERT INTO batch_numbers (batch_id, phones) VALUES ($1, $2)', [
    childId,
    phones.join(','),
  ]);
  await db.query('UPDATE rows SET batch_id = $1 WHERE batch_id = $2 AND phone = ANY($3::text[])', [
    childId,
    from.id,
    phones,
  ]);
  return childId;
}

/** A fresh request id, as the SQLite journal makes one (32 random hex characters). */
function newReqId(): string {
  return randomUUID().replaceAll('-', '');
}

/** As src/journal/suppressed.ts: a lone number the provider refused for good is suppressed. */
async function suppressIfRefused(
  db: Db,
  batchId: number,
  statusCode: string | null,
  now: string,
): Promise<void> {
  if (statusCode === null || !SUPPRESSING_CODES.has(statusCode)) return;
  await db.query(
    `INSERT INTO suppressed (phone, reason, source, added_at)
     SELECT phones, $2, 'provider', $3 FROM batch_numbers WHERE batch_id = $1 AND position(',' in phones) = 0
     ON CONFLICT (phone) DO NOTHING`,
    [batchId, describeStatusCode(statusCode), now],
  );
}

/** As src/journal/suppressed.ts: numbers of a batch made from another leave the provider's list. */
async function unsuppressIfAccepted(db: Db, batchId: number): Promise<void> {
  await db.query(
    `DELETE FROM suppressed WHERE source = 'provider' AND phone = ANY(
       SELECT unnest(string_to_array(n.phones, ',')) FROM batches b JOIN batch_numbers n ON n.batch_id = b.id
       WHERE b.id = $1 AND b.parent_id IS NOT NULL)`,
    [batchId],
  );
}
