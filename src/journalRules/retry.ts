// `smsdrop retry`: the journal side of an explicit resend, on either journal. Every failed (or
// unknown, or cancelled when asked) batch of the file hands its numbers to new planned batches
// with fresh reqIds (its rows follow them) and becomes `retried`, keeping its outcome and
// attempts: the history of who was tried when, and with what answer, stays whole. The exception
// is an unknown batch the provider would still recognise by its reqId (the caller's
// keepsOwnReqId, see send/policy.ts mayResendWithOwnReqId): it is planned again as it is, so a
// repeat is refused (160054) rather than sent twice; its attempts stay in the attempts table. The
// journal runs it in one transaction, the chosen batches locked (Dialect.lockRows), so a crash
// leaves either every chosen batch retried or none, and two retries at once cannot both move one
// batch. The sender then sends the planned batches.
//
// A number that another file sent the same message to since (the repeat window: the rows of a
// failed list, exported and dropped back, say) is not resent: its row becomes a repeat of that
// file's row, as it would have been had the other file come first.
import type {
  AttemptHistory,
  BatchRecord,
  KeepsOwnReqId,
  PreparedRetry,
  RetryOutcome,
  RetryStatus,
  SentBeforeLookup,
  UnknownRule,
} from '../ports/records.js';
import type { Awaitable } from '../ports/awaitable.js';
import {
  type NumbersIn,
  type RetryCounts,
  type RetryStore,
  tallyRetryOutcome,
} from '../ports/retry.js';
import {
  BATCH_STATE,
  DOUBT,
  FILE_CONTROL,
  FILE_STATUS,
  REPLACED_STATES,
  sqlList,
} from '../ports/states.js';
import { recountFile } from './files.js';
import { moveBatch } from './moves.js';
import { batchPhones, moveToNewBatch, type RuleContext } from './outcomes.js';
import { all, call, get, type Rule, run } from './rule.js';

/** What the retry asks of the journal beyond its statements. */
export interface RetryContext extends RuleContext {
  /** What a batch's attempts say of what reached the provider (each journal reads it its way). */
  attemptHistory(batchId: number, reqId: string): Awaitable<AttemptHistory>;
  /** SQL after a SELECT that locks its rows to the transaction's end ('' for a lone writer). */
  lockRows: string;
}

export const NEW_REQ_IDS_ONLY: UnknownRule = { keepsOwnReqId: () => false, newReqIds: true };

const BATCH_COLUMNS = `id, file_id, group_id, parent_id, req_id, numbers, state, attempts, deferrals,
  maybe_sent, first_doubt_at, next_attempt_at, status_code, status_msg`;

function* batchesIn(fileId: number, state: RetryStatus, lock = ''): Rule<BatchRecord[]> {
  return yield* all<BatchRecord>(
    `SELECT ${BATCH_COLUMNS} FROM batches WHERE file_id = ? AND state = ? ORDER BY id${lock}`,
    fileId,
    state,
  );
}

/**
 * The attempt history of an unknown batch that keeps its reqId on a retry, else undefined. (One
 * too big for today's limit must be split, and halves get new reqIds.)
 */
function* keepsItsReqId(
  ctx: RetryContext,
  batch: BatchRecord,
  maxPerRequest: number,
  keepsOwnReqId: KeepsOwnReqId,
): Rule<AttemptHistory | undefined> {
  if (batch.state !== BATCH_STATE.unknown || batch.numbers > maxPerRequest) return undefined;
  const history = yield* call(() => ctx.attemptHistory(batch.id, batch.req_id));
  return keepsOwnReqId(history) ? history : undefined;
}

/**
 * Numbers of the file's unknown batches a retry would send under their own reqId, and under new
 * ones.
 */
export function* countUnknownByReqId(
  ctx: RetryContext,
  fileId: number,
  maxPerRequest: number,
  keepsOwnReqId: KeepsOwnReqId,
): Rule<{ ownReqId: number; newReqId: number }> {
  const counts = { ownReqId: 0, newReqId: 0 };
  for (const batch of yield* batchesIn(fileId, BATCH_STATE.unknown)) {
    const keeps = yield* keepsItsReqId(ctx, batch, maxPerRequest, keepsOwnReqId);
    counts[keeps ? 'ownReqId' : 'newReqId'] += batch.numbers;
  }
  return counts;
}

/** Numbers of the file whose outcome is one of `statuses`: what a retry would resend. */
export function* countRetryable(fileId: number, statuses: readonly RetryStatus[]): Rule<number> {
  let total = 0;
  for (const state of statuses) {
    const found = yield* get<{ n: number }>(
      'SELECT coalesce(sum(numbers), 0) AS n FROM batches WHERE file_id = ? AND state = ?',
      fileId,
      state,
    );
    total += Number(found?.n ?? 0);
  }
  return total;
}

/**
 * Moves the numbers of the file's batches in `statuses` to new planned batches of at most
 * `maxPerRequest` numbers (the limit may have been lowered since: a batch the provider refused as
 * too big must not be sent again whole); the file goes back to sending. Unknown batches follow
 * `unknown`: planned again as they are when they keep their reqId, else moved only if new reqIds
 * are agreed to.
 */
export function* prepareRetry(
  ctx: RetryContext,
  fileId: number,
  statuses: readonly RetryStatus[],
  maxPerRequest: number,
  unknown: UnknownRule,
  sentBefore: SentBeforeLookup | undefined,
  now: string,
): Rule<PreparedRetry> {
  const prepared: PreparedRetry = { rows: 0, firstBatchId: null, ownReqIdBatchIds: [], repeats: 0 };
  for (const state of statuses)
    for (const batch of yield* batchesIn(fileId, state, ctx.lockRows))
      yield* retryBatch(ctx, batch, prepared, { maxPerRequest, unknown, sentBefore, now });
  if (prepared.repeats > 0) yield* recountFile(fileId);
  // A cancelled file's control is lifted with the rows an operator resends (cancelled ones with
  // --cancelled, or its failed ones): otherwise the sender would cancel them again at once. Rows
  // not asked for keep their outcome, cancelled ones too.
  if (prepared.rows > 0)
    yield* run(
      `UPDATE files SET status = ?, error = NULL, finished_at = NULL,
         control = CASE WHEN control = ? THEN NULL ELSE control END WHERE id = ?`,
      FILE_STATUS.sending,
      FILE_CONTROL.cancelled,
      fileId,
    );
  return prepared;
}

interface RetryTerms {
  maxPerRequest: number;
  unknown: UnknownRule;
  sentBefore: SentBeforeLookup | undefined;
  now: string;
}

/** One batch of a retry (see prepareRetry); what it resends is added to `prepared`. */
function* retryBatch(
  ctx: RetryContext,
  batch: BatchRecord,
  prepared: PreparedRetry,
  terms: RetryTerms,
): Rule<void> {
  const { maxPerRequest, unknown, now } = terms;
  const moveOptions = { now, dialect: ctx.dialect, guard: ctx.guard };
  const history = yield* keepsItsReqId(ctx, batch, maxPerRequest, unknown.keepsOwnReqId);
  if (history || batch.state !== BATCH_STATE.unknown || unknown.newReqIds)
    prepared.repeats += yield* leaveRepeats(ctx, batch, terms.sentBefore);
  if (batch.numbers === 0) {
    yield* moveBatch(batch.id, BATCH_STATE.retried, [], moveOptions);
    return;
  }
  if (history) {
    // In doubt since its first attempt that may have arrived: the sender checks the day again
    // before each request, and an answer that leaves it open ends it unknown, never failed. A
    // fresh count of attempts: the earlier ones stay in the attempts table (and in v_recipients).
    const restart = [
      ['attempts = 0, next_attempt_at = 0'],
      ['maybe_sent = ?', DOUBT.all],
      ['first_doubt_at = ?', history.firstDoubtAt],
    ] as const;
    yield* moveBatch(batch.id, BATCH_STATE.planned, restart, moveOptions);
    prepared.ownReqIdBatchIds.push(batch.id);
    prepared.rows += batch.numbers;
    return;
  }
  if (batch.state === BATCH_STATE.unknown && !unknown.newReqIds) return;
  const phones = yield* batchPhones(ctx.dialect, batch.id);
  for (let from = 0; from < phones.length; from += maxPerRequest) {
    const newId = yield* moveToNewBatch(ctx, batch, phones.slice(from, from + maxPerRequest), now);
    prepared.firstBatchId ??= newId;
  }
  yield* moveBatch(batch.id, BATCH_STATE.retried, [], moveOptions);
  prepared.rows += batch.numbers;
}

/**
 * Takes out of a batch about to be resent the numbers another file sent the same message to: each
 * row becomes a repeat of that file's row. Returns how many; the batch's numbers and count are
 * rewritten (its reqId, if it keeps it, still names what reached the provider, if anything did).
 */
function* leaveRepeats(
  ctx: RuleContext,
  batch: BatchRecord,
  sentBefore: SentBeforeLookup | undefined,
): Rule<number> {
  if (!sentBefore) return 0;
  const g = (yield* get<{ key_hash: number; app_id: string; template_id: string; datas: string }>(
    `SELECT key_hash, ${ctx.dialect.appOf('groups')} AS app_id, template_id, datas FROM groups WHERE id = ?`,
    batch.group_id,
  ))!;
  const key = {
    appId: g.app_id,
    templateId: g.template_id,
    datasJson: g.datas,
    keyHash: g.key_hash,
  };
  // a look-up on a server reads a key's earlier rows first (SentBeforeLookup.prepare)
  if (sentBefore.prepare) yield* call(() => sentBefore.prepare!([key]));
  const earlier = sentBefore(g.key_hash, g.app_id, g.template_id, g.datas);
  if (!earlier) return 0;
  const phones = yield* batchPhones(ctx.dialect, batch.id);
  if (sentBefore.prepareNumbers)
    yield* call(() => sentBefore.prepareNumbers!(phones.map((p) => [earlier, p] as const)));
  const repeated: string[] = [];
  const earlierRows: number[] = [];
  const kept = phones.filter((phone) => {
    const row = earlier.rowOf(phone);
    if (row === undefined) return true;
    repeated.push(phone);
    earlierRows.push(row);
    return false;
  });
  if (repeated.length === 0) return 0;
  const { dialect: d } = ctx;
  const pairs = d.pairs('phone', 'row');
  yield* run(
    `UPDATE rows SET intake = 'duplicate', batch_id = NULL,
       duplicate_of = (SELECT t.row FROM ${pairs} WHERE t.phone = rows.phone)
     WHERE batch_id = ? AND group_id = ? AND ${d.isIn('phone')}`,
    d.list(repeated),
    d.list(earlierRows),
    batch.id,
    batch.group_id,
    d.list(repeated),
  );
  yield* run('UPDATE batch_numbers SET phones = ? WHERE batch_id = ?', kept.join(','), batch.id);
  yield* run('UPDATE batches SET numbers = ? WHERE id = ?', kept.length, batch.id);
  batch.numbers = kept.length;
  return repeated.length;
}

/** Where the numbers of one retry stand now: the batches it created and their split halves. */
export function* retryOutcome(fileId: number, retry: PreparedRetry): Rule<RetryOutcome> {
  const numbers: NumbersIn[] = [];
  for (const id of retry.ownReqIdBatchIds) {
    const own = yield* get<NumbersIn>('SELECT state, numbers AS n FROM batches WHERE id = ?', id);
    if (own) numbers.push(own);
  }
  if (retry.firstBatchId !== null)
    numbers.push(
      ...(yield* all<NumbersIn>(
        `SELECT state, sum(numbers) AS n FROM batches
         WHERE file_id = ? AND id >= ? AND state NOT IN ${sqlList(REPLACED_STATES)} GROUP BY state`,
        fileId,
        retry.firstBatchId,
      )),
    );
  return tallyRetryOutcome(retry.rows, numbers);
}

/** How a journal runs the retry's rules: on its connection, or in a transaction of their own. */
export interface RetryRunner {
  run<T>(rule: (ctx: RetryContext) => Rule<T>): Awaitable<T>;
  inTransaction<T>(rule: (ctx: RetryContext) => Rule<T>): Awaitable<T>;
}

/** The retry counts alone: they only read, so a read-only journal has them too. */
export function retryCountsOf(journal: RetryRunner): RetryCounts {
  return {
    countUnknownByReqId: (fileId, maxPerRequest, keepsOwnReqId) =>
      journal.run((ctx) => countUnknownByReqId(ctx, fileId, maxPerRequest, keepsOwnReqId)),
    countRetryable: (fileId, statuses) => journal.run(() => countRetryable(fileId, statuses)),
  };
}

/** The RetryStore port from the rules; the preparation in one transaction. */
export function retryStoreOf(
  journal: RetryRunner,
  now = () => new Date().toISOString(),
): RetryStore {
  return {
    ...retryCountsOf(journal),
    prepareRetry: (fileId, statuses, maxPerRequest, unknown = NEW_REQ_IDS_ONLY, sentBefore) =>
      journal.inTransaction((ctx) =>
        prepareRetry(ctx, fileId, statuses, maxPerRequest, unknown, sentBefore, now()),
      ),
    retryOutcome: (fileId, retry) => journal.run(() => retryOutcome(fileId, retry)),
  };
}
