// Where a request's outcome takes its batch (a Transition, decided by send/policy.ts) and what goes
// with it: the columns each outcome sets, a split's halves, the numbers a refusal suppresses or an
// acceptance releases. Each journal runs these inside the transaction that records the outcome.
import { randomBytes } from 'node:crypto';
import { describeStatusCode, SUPPRESSING_CODES } from '../provider/codes.js';
import type { AttemptResult, BatchRecord, Transition } from '../ports/records.js';
import { BATCH_STATE } from '../ports/states.js';
import { storedAttemptReqId } from './attempts.js';
import { storedStatusCode } from './statusCodes.js';
import { fileFreeToGo } from './fileFree.js';
import { type MoveGuard, moveBatch, moveBatchReturning, moveBatchThen } from './moves.js';
import { all, type Dialect, durable, type Fragment, get, type Rule, run } from './rule.js';

/** What a journal gives its rules: its SQL's spelling, and what it adds to every move. */
export interface RuleContext {
  dialect: Dialect;
  guard?: MoveGuard;
}

const statusOf = (code: string | null, msg: string | null): Fragment => [
  'status_code = ?, status_msg = ?',
  code,
  msg,
];

/**
 * Written BEFORE the request leaves: from here until its outcome is recorded the batch is
 * `sending`, and a crash leaves it so, which the next run treats as "may have been received".
 * `batch` is the batch as read when it was picked: it is claimed only if it is still that batch
 * (same random req_id: a row id reused by another file's intake is not it), still planned, its
 * file free to go (no operator's pause, hold or cancel; its start time come: control.ts), and the
 * journal's guard holds (PostgreSQL's lease). Returns the attempt's id, or undefined: whoever
 * moved the batch, or holds its file, owns it now. `node`: the process making it (attempts.node).
 */
export function* startAttempt(
  ctx: RuleContext,
  batch: Pick<BatchRecord, 'id' | 'req_id'>,
  reqId: string | null,
  now: string,
  node: string,
): Rule<number | undefined> {
  const free = fileFreeToGo(now, ctx.dialect.forShare);
  const where = ctx.guard?.where;
  const guard: MoveGuard = {
    ...ctx.guard,
    where: where ? [`${free[0]} AND ${where[0]}`, ...free.slice(1), ...where.slice(1)] : free,
  };
  const options = {
    onlyFrom: [BATCH_STATE.planned],
    reqId: batch.req_id,
    now,
    dialect: ctx.dialect,
    guard,
  };
  const attempt = yield* moveBatchThen<{ id: number | string }>(
    batch.id,
    BATCH_STATE.sending,
    [['attempts = attempts + 1']],
    options,
    [
      `INSERT INTO attempts (batch_id, req_id, started_at, node) SELECT moved.id, ?, ${ctx.dialect.storedTime('?')}, ${ctx.dialect.storedNode('?')} FROM moved RETURNING id`,
      storedAttemptReqId(reqId, batch.req_id),
      now,
      node,
    ],
  );
  return attempt === false ? undefined : Number(attempt.id);
}

/**
 * The attempt's outcome and where its batch goes; the move comes first, so that a move the batch
 * no longer answers to writes nothing.
 */
export function* finishAttempt(
  ctx: RuleContext,
  attempt: { id: number; result: AttemptResult },
  batchId: number,
  transition: Transition,
  now: string,
): Rule<void> {
  // Doubt starts when the request left, not when we gave up waiting: that is the day the
  // provider's reqId memory counts from. Only a batch planned again keeps it.
  const started =
    transition.to === 'planned'
      ? yield* get<{ started_at: string }>(
          `SELECT ${ctx.dialect.timeText('started_at')} AS started_at FROM attempts WHERE id = ?`,
          attempt.id,
        )
      : undefined;
  yield* applyTransition(ctx, batchId, transition, now, started?.started_at ?? now);
  const { result } = attempt;
  yield* run(
    `UPDATE attempts SET finished_at = ${ctx.dialect.storedTime('?')}, outcome = ?, status_code = ?, reason = ?
     WHERE id = ?`,
    now,
    result.outcome,
    storedStatusCode(result.outcome, result.statusCode),
    result.reason,
    attempt.id,
  );
}

/** Where a batch goes. `doubtSince`: when the request that may have been received left. */
export function* applyTransition(
  ctx: RuleContext,
  batchId: number,
  t: Transition,
  now: string,
  doubtSince = now,
): Rule<void> {
  const options = { now, dialect: ctx.dialect, guard: ctx.guard };
  switch (t.to) {
    case 'accepted': {
      const moved = yield* moveBatchReturning<{ parent_id: number | null }>(
        batchId,
        BATCH_STATE.accepted,
        [
          statusOf(storedStatusCode(t.to, t.statusCode), t.statusMsg ?? null),
          ['sms_message_sid = ?', ctx.dialect.storedSid(t.smsMessageSid)],
          ['date_created = ?', ctx.dialect.storedStamp(t.dateCreated)],
        ],
        options,
        'parent_id',
      );
      if (moved === false || moved.parent_id == null) return;
      return yield* unsuppressSplitAccepted(ctx, batchId);
    }
    case 'failed':
    case 'unknown':
      yield* moveBatch(batchId, t.to, [statusOf(t.statusCode, t.statusMsg)], options);
      if (t.to === 'failed') yield* suppressIfRefused(ctx.dialect, batchId, t.statusCode, now);
      return;
    case 'planned':
      yield* moveBatch(
        batchId,
        BATCH_STATE.planned,
        plannedAgain(ctx.dialect, t, doubtSince),
        options,
      );
      return;
    case 'split':
      yield* moveBatch(batchId, BATCH_STATE.split, [statusOf(t.statusCode, t.statusMsg)], options);
      return yield* splitBatch(ctx, batchId, now);
  }
}

function plannedAgain(
  dialect: Dialect,
  t: Extract<Transition, { to: 'planned' }>,
  doubtSince: string,
): Fragment[] {
  return [
    ['next_attempt_at = ?', t.nextAttemptAt],
    statusOf(t.statusCode, t.statusMsg),
    [`maybe_sent = ${dialect.greatest('maybe_sent', 'CAST(? AS INTEGER)')}`, t.doubt],
    [
      'first_doubt_at = CASE WHEN CAST(? AS INTEGER) > 0 AND first_doubt_at IS NULL THEN ? ELSE first_doubt_at END',
      t.doubt,
      doubtSince,
    ],
    ['deferrals = deferrals + CAST(? AS INTEGER)', t.deferral ? 1 : 0],
    [
      'attempts = CASE WHEN CAST(? AS INTEGER) = 1 THEN 0 ELSE attempts - CAST(? AS INTEGER) END',
      t.resetAttempts ? 1 : 0,
      t.refundAttempt ? 1 : 0,
    ],
  ];
}

/** A batch's numbers, in row order. */
export function* batchPhones(d: Dialect, batchId: number): Rule<string[]> {
  const found = yield* get<{ phones: string | null }>(
    `SELECT ${d.batchPhones('b')} AS phones FROM batches b WHERE b.id = ?`,
    batchId,
  );
  return found?.phones ? found.phones.split(',') : [];
}

/** Number-rejected: the (already split) batch's numbers go to two new planned halves. */
function* splitBatch(ctx: RuleContext, batchId: number, now: string): Rule<void> {
  const parent = yield* get<Pick<BatchRecord, 'id' | 'file_id' | 'group_id'>>(
    'SELECT id, file_id, group_id FROM batches WHERE id = ?',
    batchId,
  );
  const phones = yield* batchPhones(ctx.dialect, batchId);
  const middle = Math.ceil(phones.length / 2);
  for (const half of [phones.slice(0, middle), phones.slice(middle)])
    if (half.length > 0) yield* moveToNewBatch(ctx, parent!, half, now);
}

const REQ_ID_ALPHABET = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
/** Characters of a request id: 62^16 is about 2^95, so ids drawn at random never meet. */
export const REQ_ID_LENGTH = 16;

/**
 * A fresh request id, random, so that no two journals or runs share one: letters and digits only
 * (the provider's SDK drops any other), and half the provider's 32 characters, because a journal
 * keeps it three times (the batch, its index, the attempt) and a one-row request writes little
 * else.
 */
export function newReqId(): string {
  let id = '';
  while (id.length < REQ_ID_LENGTH)
    for (const byte of randomBytes(REQ_ID_LENGTH * 2)) {
      // 248 = 4 * 62: bytes at or above it are skipped, so every character is equally likely.
      if (byte < 248 && id.length < REQ_ID_LENGTH) id += REQ_ID_ALPHABET[byte % 62];
    }
  return id;
}

/**
 * A new planned batch (fresh reqId) for some of a batch's numbers; their rows follow them (a
 * split's halves, a retry's new batches).
 */
export function* moveToNewBatch(
  ctx: RuleContext,
  from: Pick<BatchRecord, 'id' | 'file_id' | 'group_id'>,
  phones: readonly string[],
  now: string,
): Rule<number> {
  const created = yield* get<{ id: number }>(
    `INSERT INTO batches (file_id, group_id, parent_id, req_id, numbers, state, created_at, updated_at)
     VALUES (?, ?, ?, ?, ?, 'planned', ${ctx.dialect.storedTime('?')}, ${ctx.dialect.storedTime('?')}) RETURNING id`,
    from.file_id,
    from.group_id,
    from.id,
    newReqId(),
    phones.length,
    now,
    now,
  );
  const childId = created!.id;
  yield* run(
    'INSERT INTO batch_numbers (batch_id, phones) VALUES (?, ?)',
    childId,
    phones.join(','),
  );
  // before it can be sent: a request naming it must never outlive a crash that takes it back
  yield* durable();
  // A batch's rows are its group's: naming the group lets the (phone, group) index find them.
  yield* run(
    `UPDATE rows SET batch_id = ? WHERE batch_id = ? AND group_id = ? AND ${ctx.dialect.isIn('phone')}`,
    childId,
    from.id,
    from.group_id,
    ctx.dialect.list(phones),
  );
  return childId;
}

/**
 * A batch failed for good: if it held one number and the provider's code says that number will
 * never take a message, the number is suppressed (inside the transaction that records the failure).
 */
function* suppressIfRefused(
  d: Dialect,
  batchId: number,
  statusCode: string | null,
  now: string,
): Rule<void> {
  if (statusCode === null || !SUPPRESSING_CODES.has(statusCode)) return;
  const phones = yield* batchPhones(d, batchId);
  if (phones.length !== 1) return;
  yield* run(
    `INSERT INTO suppressed (phone, reason, source, added_at) VALUES (?, ?, 'provider', ?)
     ON CONFLICT (phone) DO NOTHING`,
    phones[0]!,
    describeStatusCode(statusCode),
    now,
  );
}

/**
 * A batch made from another (a retry, a split half: it has a parent) was accepted: numbers in it
 * that the provider had refused for good are evidently taken again (an explicit retry after the
 * block was lifted), so they leave the list. Numbers people listed stay. Intake never plans a
 * suppressed number, so only such a batch can hold one; the batches read from the file learn that
 * from their move's own UPDATE (RETURNING parent_id), at no statement of their own.
 */
function* unsuppressSplitAccepted(ctx: RuleContext, batchId: number): Rule<void> {
  if ((yield* all('SELECT 1 AS one FROM suppressed LIMIT 1')).length === 0) return;
  yield* run(
    `DELETE FROM suppressed WHERE source = 'provider' AND ${ctx.dialect.isIn('phone')}`,
    ctx.dialect.list(yield* batchPhones(ctx.dialect, batchId)),
  );
}
