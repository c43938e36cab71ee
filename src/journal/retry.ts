// `smsdrop retry`: the journal side of an explicit resend. Every failed (or unknown) batch of the
// file hands its numbers to a new planned batch with a fresh reqId (its rows follow them) and
// becomes `retried`, keeping its outcome and attempts: the history of who was tried when, and
// with what answer, stays whole. The exception is an unknown batch the provider would still
// recognise by its reqId (the caller's keepsOwnReqId, see send/policy.ts mayResendWithOwnReqId):
// it is planned again as it is, so a repeat is refused (160054) rather than sent twice; its
// attempts stay in the attempts table. All in one transaction, so a crash leaves either every
// chosen batch retried or none. The normal sender then sends the planned batches.
//
// A number that another file sent the same message to since (sentBefore.ts: the rows of a failed
// list, exported and dropped back, say) is not resent: its row becomes a repeat of that file's
// row, as it would have been had the other file come first.
import { attemptHistory } from './attempts.js';
import type { AttemptHistory } from '../ports/records.js';
import { moveToNewBatch } from './batches.js';
import type { BatchRecord } from '../ports/records.js';
import { batchPhones } from './batchNumbers.js';
import { type Assignment, moveBatch } from './moves.js';
import { recountFile, setFileStatus } from './files.js';
import { insideOf, type Journal } from './connection.js';
import { nowIso, sql, sqlPluck } from './sql.js';
import type { SentBefore, SentBeforeLookup } from '../ports/plan.js';
import { BATCH_STATE, DOUBT, FILE_STATUS, REPLACED_STATES, sqlList } from '../ports/states.js';
import type {
  KeepsOwnReqId,
  PreparedRetry,
  RetryOutcome,
  RetryStatus,
  UnknownRule,
} from '../ports/records.js';
import { type NumbersIn, tallyRetryOutcome } from '../ports/retry.js';

const NEW_REQ_IDS_ONLY: UnknownRule = { keepsOwnReqId: () => false, newReqIds: true };

/**
 * Numbers of the file's unknown batches a retry would send under their own reqId, and under new
 * ones.
 */
export function countUnknownByReqId(
  db: Journal,
  fileId: number,
  maxPerRequest: number,
  keepsOwnReqId: KeepsOwnReqId,
): { ownReqId: number; newReqId: number } {
  const counts = { ownReqId: 0, newReqId: 0 };
  for (const batch of batchesIn(db, fileId, BATCH_STATE.unknown)) {
    counts[keepsItsReqId(db, batch, maxPerRequest, keepsOwnReqId) ? 'ownReqId' : 'newReqId'] +=
      batch.numbers;
  }
  return counts;
}

/**
 * The attempt history of an unknown batch that keeps its reqId on a retry, else undefined. (One
 * too big for today's limit must be split, and halves get new reqIds.)
 */
function keepsItsReqId(
  db: Journal,
  batch: BatchRecord,
  maxPerRequest: number,
  keepsOwnReqId: KeepsOwnReqId,
): AttemptHistory | undefined {
  if (batch.state !== BATCH_STATE.unknown || batch.numbers > maxPerRequest) return undefined;
  const history = attemptHistory(db, batch.id, batch.req_id);
  return keepsOwnReqId(history) ? history : undefined;
}

function batchesIn(db: Journal, fileId: number, state: RetryStatus): BatchRecord[] {
  return sql(db, 'SELECT * FROM batches WHERE file_id = ? AND state = ? ORDER BY id').all(
    fileId,
    state,
  ) as BatchRecord[];
}

/** Numbers of the file whose outcome is one of `statuses`: what a retry would resend. */
export function countRetryable(
  db: Journal,
  fileId: number,
  statuses: readonly RetryStatus[],
): number {
  return statuses.reduce(
    (total, state) =>
      total +
      (sqlPluck(
        db,
        'SELECT coalesce(sum(numbers), 0) FROM batches WHERE file_id = ? AND state = ?',
      ).get(fileId, state) as number),
    0,
  );
}

/**
 * Moves the numbers of the file's batches in `statuses` to new planned batches of at most
 * `maxPerRequest` numbers (the limit may have been lowered since: a batch the provider refused
 * as too big must not be sent again whole); the file goes back to sending. Unknown batches
 * follow `unknown`: planned again as they are when they keep their reqId, else moved only if
 * new reqIds are agreed to.
 */
export function prepareRetry(
  db: Journal,
  fileId: number,
  statuses: readonly RetryStatus[],
  maxPerRequest: number,
  unknown: UnknownRule = NEW_REQ_IDS_ONLY,
  sentBefore?: SentBeforeLookup,
): PreparedRetry {
  return insideOf(db).transaction((): PreparedRetry => {
    const now = nowIso();
    let rows = 0;
    let repeats = 0;
    let firstBatchId: number | null = null;
    const ownReqIdBatchIds: number[] = [];
    const leaveRepeats = repeatsLeaver(db, sentBefore);
    for (const state of statuses) {
      for (const batch of batchesIn(db, fileId, state)) {
        const history = keepsItsReqId(db, batch, maxPerRequest, unknown.keepsOwnReqId);
        if (history || state === BATCH_STATE.failed || unknown.newReqIds)
          repeats += leaveRepeats(batch);
        if (batch.numbers === 0) {
          moveBatch(db, batch.id, BATCH_STATE.retried, [], { now });
          continue;
        }
        if (history) {
          // In doubt since its first attempt that may have arrived: the sender checks the day again
          // before each request, and an answer that leaves it open ends it unknown, never failed.
          // A fresh count of attempts: the earlier ones stay in the attempts table (and in
          // v_recipients).
          const restart: Assignment[] = [
            ['attempts = 0, next_attempt_at = 0'],
            ['maybe_sent = ?', DOUBT.all],
            ['first_doubt_at = ?', history.firstDoubtAt],
          ];
          moveBatch(db, batch.id, BATCH_STATE.planned, restart, { now });
          ownReqIdBatchIds.push(batch.id);
          rows += batch.numbers;
          continue;
        }
        if (state === BATCH_STATE.unknown && !unknown.newReqIds) continue;
        const phones = batchPhones(db, batch.id);
        for (let from = 0; from < phones.length; from += maxPerRequest) {
          const newId = moveToNewBatch(db, batch, phones.slice(from, from + maxPerRequest), now);
          firstBatchId ??= newId;
        }
        moveBatch(db, batch.id, BATCH_STATE.retried, [], { now });
        rows += batch.numbers;
      }
    }
    if (repeats > 0) recountFile(db, fileId);
    if (rows > 0) setFileStatus(db, fileId, FILE_STATUS.sending);
    return { rows, firstBatchId, ownReqIdBatchIds, repeats };
  })();
}

/**
 * Takes out of a batch about to be resent the numbers another file sent the same message to: each
 * row becomes a repeat of that file's row. Returns how many; the batch's numbers and count are
 * rewritten (its reqId, if it keeps it, still names what reached the provider, if anything did).
 */
function repeatsLeaver(
  db: Journal,
  sentBefore: SentBeforeLookup | undefined,
): (batch: BatchRecord) => number {
  if (!sentBefore) return () => 0;
  const groupOf = sql(db, 'SELECT key_hash, app_id, template_id, datas FROM groups WHERE id = ?');
  const markRepeat = sql(
    db,
    "UPDATE rows SET intake = 'duplicate', duplicate_of = ?, batch_id = NULL WHERE batch_id = ? AND phone = ?",
  );
  const rewrite = sql(db, 'UPDATE batch_numbers SET phones = ? WHERE batch_id = ?');
  const recount = sql(db, 'UPDATE batches SET numbers = ? WHERE id = ?');
  return (batch) => {
    const g = groupOf.get(batch.group_id) as {
      key_hash: number;
      app_id: string;
      template_id: string;
      datas: string;
    };
    const earlier: SentBefore | undefined = sentBefore(
      g.key_hash,
      g.app_id,
      g.template_id,
      g.datas,
    );
    if (!earlier) return 0;
    const phones = batchPhones(db, batch.id);
    const kept = phones.filter((phone) => {
      const row = earlier.rowOf(phone);
      if (row === undefined) return true;
      markRepeat.run(row, batch.id, phone);
      return false;
    });
    if (kept.length === phones.length) return 0;
    rewrite.run(kept.join(','), batch.id);
    recount.run(kept.length, batch.id);
    batch.numbers = kept.length;
    return phones.length - kept.length;
  };
}

/** Where the numbers of one retry stand now: the batches it created and their split halves. */
export function retryOutcome(db: Journal, fileId: number, retry: PreparedRetry): RetryOutcome {
  const numbers = (id: number) =>
    sql(db, 'SELECT state, numbers AS n FROM batches WHERE id = ?').get(id) as NumbersIn;
  const own = retry.ownReqIdBatchIds.map(numbers);
  if (retry.firstBatchId === null) return tallyRetryOutcome(retry.rows, own);
  const byState = sql(
    db,
    `SELECT state, sum(numbers) AS n FROM batches WHERE file_id = ? AND id >= ? AND state NOT IN ${sqlList(REPLACED_STATES)} GROUP BY state`,
  ).all(fileId, retry.firstBatchId) as NumbersIn[];
  return tallyRetryOutcome(retry.rows, [...own, ...byState]);
}
