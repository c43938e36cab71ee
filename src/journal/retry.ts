// `smsdrop retry`: the journal side of an explicit resend. Every failed (or unknown) batch of the
// file hands its numbers to a new planned batch with a fresh reqId (its rows follow them) and
// becomes `retried`, keeping its outcome and attempts: the history of who was tried when, and
// with what answer, stays whole. All in one transaction, so a crash leaves either every chosen
// batch retried or none. The normal sender then sends the new batches.
import { type BatchRecord, batchPhones, moveToNewBatch } from './batches.js';
import { setFileStatus } from './files.js';
import { type Db, nowIso, sql } from './open.js';
import { BATCH_STATE, FILE_STATUS } from './states.js';

/** The outcomes an operator may resend. */
export type RetryStatus = typeof BATCH_STATE.failed | typeof BATCH_STATE.unknown;

export interface PreparedRetry {
  /** Numbers (rows) handed to new batches. */
  rows: number;
  /** The first new batch: later batches of the file are the others and their split halves (and,
   * for a file still in progress, halves of its other batches split meanwhile). */
  firstBatchId: number | null;
}

/** Numbers of the file whose outcome is one of `statuses`: what a retry would resend. */
export function countRetryable(db: Db, fileId: number, statuses: readonly RetryStatus[]): number {
  return statuses.reduce(
    (total, state) => total + (sql(db, 'SELECT coalesce(sum(numbers), 0) FROM batches WHERE file_id = ? AND state = ?').pluck().get(fileId, state) as number),
    0,
  );
}

/**
 * Moves the numbers of the file's batches in `statuses` to new planned batches of at most
 * `maxPerRequest` numbers (the limit may have been lowered since: a batch the provider refused
 * as too big must not be sent again whole); the file goes back to sending.
 */
export function prepareRetry(db: Db, fileId: number, statuses: readonly RetryStatus[], maxPerRequest: number): PreparedRetry {
  return db.transaction((): PreparedRetry => {
    const now = nowIso();
    let rows = 0;
    let firstBatchId: number | null = null;
    for (const state of statuses) {
      const batches = sql(db, 'SELECT * FROM batches WHERE file_id = ? AND state = ? ORDER BY id').all(fileId, state) as BatchRecord[];
      for (const batch of batches) {
        const phones = batchPhones(db, batch.id);
        for (let from = 0; from < phones.length; from += maxPerRequest) {
          const newId = moveToNewBatch(db, batch, phones.slice(from, from + maxPerRequest), now);
          firstBatchId ??= newId;
        }
        sql(db, "UPDATE batches SET state = 'retried', updated_at = ? WHERE id = ?").run(now, batch.id);
        rows += batch.numbers;
      }
    }
    if (rows > 0) setFileStatus(db, fileId, FILE_STATUS.sending);
    return { rows, firstBatchId };
  })();
}

export interface RetryOutcome {
  rows: number;
  accepted: number;
  failed: number;
  unknown: number;
  pending: number;
}

/** Where the numbers of one retry stand now: the batches it created and their split halves. */
export function retryOutcome(db: Db, fileId: number, retry: PreparedRetry): RetryOutcome {
  const outcome: RetryOutcome = { rows: retry.rows, accepted: 0, failed: 0, unknown: 0, pending: 0 };
  if (retry.firstBatchId === null) return outcome;
  const byState = sql(
    db,
    "SELECT state, sum(numbers) AS n FROM batches WHERE file_id = ? AND id >= ? AND state NOT IN ('split', 'retried') GROUP BY state",
  ).all(fileId, retry.firstBatchId) as { state: string; n: number }[];
  for (const { state, n } of byState) {
    if (state === 'accepted' || state === 'failed' || state === 'unknown') outcome[state] += n;
    else outcome.pending += n;
  }
  return outcome;
}
