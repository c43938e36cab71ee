// `smsdrop retry` on the PostgreSQL journal (as journal/retry.ts in SQLite, which explains the
// rules): every failed (or unknown) batch of the file hands its numbers to new planned batches
// with fresh reqIds and becomes `retried`; an unknown batch the provider would still recognise by
// its reqId is planned again as it is. All in one transaction, the file's chosen batches locked
// first (FOR UPDATE), so that two retries at once cannot both move one batch.
import type pg from 'pg';
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
import { type NumbersIn, type RetryStore, tallyRetryOutcome } from '../ports/retry.js';
import { SmsdropError } from '../errors.js';
import {
  BATCH_MOVES,
  BATCH_STATE,
  type BatchState,
  DOUBT,
  REPLACED_STATES,
  sqlList,
} from '../ports/states.js';
import { attemptHistory } from './sendReads.js';
import { moveToNewBatch } from './sendMoves.js';
import { type Queryable, withTransaction } from './smallTransaction.js';

const NEW_REQ_IDS_ONLY: UnknownRule = { keepsOwnReqId: () => false, newReqIds: true };

const BATCH_COLUMNS = `id, file_id, group_id, parent_id, req_id, numbers, state, attempts, deferrals,
  maybe_sent, first_doubt_at, next_attempt_at, status_code, status_msg`;

async function batchesIn(
  db: Queryable,
  fileId: number,
  state: RetryStatus,
  lock = false,
): Promise<BatchRecord[]> {
  const { rows } = await db.query<BatchRecord>(
    `SELECT ${BATCH_COLUMNS} FROM batches WHERE file_id = $1 AND state = $2 ORDER BY id${lock ? ' FOR UPDATE' : ''}`,
    [fileId, state],
  );
  return rows;
}

/** The history of an unknown batch that keeps its reqId on a retry, else undefined. */
async function keepsItsReqId(
  db: Queryable,
  batch: BatchRecord,
  maxPerRequest: number,
  keepsOwnReqId: KeepsOwnReqId,
): Promise<AttemptHistory | undefined> {
  if (batch.state !== BATCH_STATE.unknown || batch.numbers > maxPerRequest) return undefined;
  const history = await attemptHistory(db, batch.id, batch.req_id);
  return keepsOwnReqId(history) ? history : undefined;
}

async function countUnknownByReqId(
  pool: pg.Pool,
  fileId: number,
  maxPerRequest: number,
  keepsOwnReqId: KeepsOwnReqId,
): Promise<{ ownReqId: number; newReqId: number }> {
  const counts = { ownReqId: 0, newReqId: 0 };
  for (const batch of await batchesIn(pool, fileId, BATCH_STATE.unknown)) {
    const keeps = await keepsItsReqId(pool, batch, maxPerRequest, keepsOwnReqId);
    counts[keeps ? 'ownReqId' : 'newReqId'] += batch.numbers;
  }
  return counts;
}

async function countRetryable(
  pool: pg.Pool,
  fileId: number,
  statuses: readonly RetryStatus[],
): Promise<number> {
  const { rows } = await pool.query<{ n: number }>(
    'SELECT coalesce(sum(numbers), 0) AS n FROM batches WHERE file_id = $1 AND state = ANY($2::text[])',
    [fileId, [...statuses]],
  );
  return rows[0]!.n;
}

/** The retry's work on one transaction's client (see prepareRetry). */
async function prepareOn(
  client: pg.PoolClient,
  fileId: number,
  statuses: readonly RetryStatus[],
  maxPerRequest: number,
  unknown: UnknownRule,
  sentBefore: SentBeforeLookup | undefined,
): Promise<PreparedRetry> {
  const now = new Date().toISOString();
  const prepared: PreparedRetry = { rows: 0, firstBatchId: null, ownReqIdBatchIds: [], repeats: 0 };
  for (const state of statuses) {
    for (const batch of await batchesIn(client, fileId, state, true)) {
      const history = await keepsItsReqId(client, batch, maxPerRequest, unknown.keepsOwnReqId);
      if (history || state === BATCH_STATE.failed || unknown.newReqIds)
        prepared.repeats += await leaveRepeats(client, batch, sentBefore);
      if (batch.numbers === 0) {
        await moveRetried(client, batch.id, now);
        continue;
      }
      if (history) {
        // In doubt since its first attempt that may have arrived; a fresh count of attempts.
        await planAgain(client, batch.id, DOUBT.all, history.firstDoubtAt, now);
        prepared.ownReqIdBatchIds.push(batch.id);
        prepared.rows += batch.numbers;
        continue;
      }
      if (state === BATCH_STATE.unknown && !unknown.newReqIds) continue;
      const phones = await batchPhones(client, batch.id);
      for (let from = 0; from < phones.length; from += maxPerRequest) {
        const newId = await moveToNewBatch(
          client,
          batch,
          phones.slice(from, from + maxPerRequest),
          now,
        );
        prepared.firstBatchId ??= newId;
      }
      await moveRetried(client, batch.id, now);
      prepared.rows += batch.numbers;
    }
  }
  if (prepared.repeats > 0) await recountFile(client, fileId);
  if (prepared.rows > 0)
    await client.query(
      "UPDATE files SET status = 'sending', error = NULL, finished_at = NULL WHERE id = $1",
      [fileId],
    );
  return prepared;
}

/** The states a batch may come from to reach `to` (BATCH_MOVES read backwards). */
function movesInto(to: BatchState): string[] {
  return Object.values(BATCH_STATE).filter((from) => BATCH_MOVES[from].includes(to));
}

/**
 * Moves a batch to `to` only from a state BATCH_MOVES allows; `set` adds assignments from $4 on.
 * A batch that did not move is a bug (its row is locked by this transaction): E_BATCH_TRANSITION.
 */
async function moveBatch(
  db: Queryable,
  batchId: number,
  to: BatchState,
  now: string,
  set = '',
  params: unknown[] = [],
): Promise<void> {
  const { rowCount } = await db.query(
    `UPDATE batches SET state = $1, updated_at = $2${set} WHERE id = $3 AND state = ANY($${4 + params.length}::text[])`,
    [to, now, batchId, ...params, movesInto(to)],
  );
  if (rowCount === 1) return;
  throw new SmsdropError('E_BATCH_TRANSITION', `batch ${batchId} cannot go to ${to}`);
}

const moveRetried = (db: Queryable, batchId: number, now: string) =>
  moveBatch(db, batchId, BATCH_STATE.retried, now);

/** An unknown batch planned again under its own reqId: a fresh count of attempts, no lease. */
const planAgain = (
  db: Queryable,
  batchId: number,
  doubt: number,
  firstDoubtAt: string | null,
  now: string,
) =>
  moveBatch(
    db,
    batchId,
    BATCH_STATE.planned,
    now,
    ', attempts = 0, next_attempt_at = 0, maybe_sent = $4, first_doubt_at = $5, lease_node = NULL, lease_until = NULL',
    [doubt, firstDoubtAt],
  );

async function batchPhones(db: Queryable, batchId: number): Promise<string[]> {
  const { rows } = await db.query<{ phones: string }>(
    'SELECT phones FROM batch_numbers WHERE batch_id = $1',
    [batchId],
  );
  return rows[0]?.phones ? rows[0].phones.split(',') : [];
}

const RECOUNT = `UPDATE files SET rows = (SELECT count(*) FROM rows WHERE file_id = $1),
    invalid = (SELECT count(*) FROM rows WHERE file_id = $1 AND intake = 'invalid'),
    duplicates = (SELECT count(*) FROM rows WHERE file_id = $1 AND intake = 'duplicate'),
    repeats = (SELECT count(*) FROM rows r WHERE r.file_id = $1 AND r.intake = 'duplicate'
                 AND (SELECT o.file_id FROM rows o WHERE o.id = r.duplicate_of) != $1)
  WHERE id = $1`;

async function recountFile(db: Queryable, fileId: number): Promise<void> {
  await db.query(RECOUNT, [fileId]);
}

/**
 * Takes out of a batch about to be resent the numbers another file sent the same message to: each
 * row becomes a repeat of that file's row. Returns how many.
 */
async function leaveRepeats(
  db: Queryable,
  batch: BatchRecord,
  sentBefore: SentBeforeLookup | undefined,
): Promise<number> {
  if (!sentBefore) return 0;
  const { rows } = await db.query<{
    key_hash: number;
    app_id: string;
    template_id: string;
    datas: string;
  }>('SELECT key_hash, app_id, template_id, datas FROM groups WHERE id = $1', [batch.group_id]);
  const g = rows[0]!;
  const key = {
    appId: g.app_id,
    templateId: g.template_id,
    datasJson: g.datas,
    keyHash: g.key_hash,
  };
  await sentBefore.prepare?.([key]); // the look-up on PostgreSQL reads a key's rows first
  const earlier = sentBefore(g.key_hash, g.app_id, g.template_id, g.datas);
  if (!earlier) return 0;
  const phones = await batchPhones(db, batch.id);
  const repeated: { phone: string; row: number }[] = [];
  const kept = phones.filter((phone) => {
    const row = earlier.rowOf(phone);
    if (row !== undefined) repeated.push({ phone, row });
    return row === undefined;
  });
  if (repeated.length === 0) return 0;
  await db.query(
    `UPDATE rows r SET intake = 'duplicate', duplicate_of = t.row, batch_id = NULL
     FROM unnest($1::text[], $2::bigint[]) AS t(phone, row) WHERE r.batch_id = $3 AND r.phone = t.phone`,
    [repeated.map((r) => r.phone), repeated.map((r) => r.row), batch.id],
  );
  await db.query('UPDATE batch_numbers SET phones = $1 WHERE batch_id = $2', [
    kept.join(','),
    batch.id,
  ]);
  await db.query('UPDATE batches SET numbers = $1 WHERE id = $2', [kept.length, batch.id]);
  batch.numbers = kept.length;
  return repeated.length;
}

async function retryOutcome(
  pool: pg.Pool,
  fileId: number,
  retry: PreparedRetry,
): Promise<RetryOutcome> {
  const own = await pool.query<NumbersIn>(
    'SELECT state, numbers AS n FROM batches WHERE id = ANY($1::bigint[])',
    [retry.ownReqIdBatchIds],
  );
  if (retry.firstBatchId === null) return tallyRetryOutcome(retry.rows, own.rows);
  const byState = await pool.query<NumbersIn>(
    `SELECT state, sum(numbers) AS n FROM batches WHERE file_id = $1 AND id >= $2 AND state NOT IN ${sqlList(REPLACED_STATES)} GROUP BY state`,
    [fileId, retry.firstBatchId],
  );
  return tallyRetryOutcome(retry.rows, [...own.rows, ...byState.rows]);
}

export function pgRetryStore(pool: pg.Pool): RetryStore {
  return {
    countUnknownByReqId: (fileId, maxPerRequest, keepsOwnReqId) =>
      countUnknownByReqId(pool, fileId, maxPerRequest, keepsOwnReqId),
    countRetryable: (fileId, statuses) => countRetryable(pool, fileId, statuses),
    prepareRetry: (fileId, statuses, maxPerRequest, unknown = NEW_REQ_IDS_ONLY, sentBefore) =>
      withTransaction(pool, (client) =>
        prepareOn(client, fileId, statuses, maxPerRequest, unknown, sentBefore),
      ),
    retryOutcome: (fileId, retry) => retryOutcome(pool, fileId, retry),
  };
}
