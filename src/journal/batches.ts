// Batches in the journal: planned from a file's rows, then driven through their states by the
// sender (see states.ts for the state machine). Every change that goes with a request outcome is
// one transaction: the attempt, the batch and its rows move together or not at all.
import type { BatchRecord } from '../ports/records.js';
import { batchPhones, getBatch, newReqId } from './batchNumbers.js';
import { insideOf, type Journal } from './connection.js';
import { needsJournalCommit, noteAttemptStarted } from './intents.js';
import { type Assignment, moveBatch } from './moves.js';
import { nowIso, sql, sqlPluck } from './sql.js';
import { suppressIfRefused, unsuppressIfAccepted } from './suppressed.js';
import { type DueRow, toBatchToSend } from '../ports/dueRow.js';
import type { AttemptResult, BatchToSend, Transition } from '../ports/records.js';

const DUE_BATCHES = `SELECT b.*, g.app_id AS g_app_id, g.template_id AS g_template_id, g.datas AS g_datas, n.phones AS g_phones
  FROM batches b JOIN groups g ON g.id = b.group_id JOIN batch_numbers n ON n.batch_id = b.id
  WHERE b.file_id = ? AND b.state = 'planned' AND b.next_attempt_at <= ?`;

/** Planned batches of the file due by `now`, after `afterId`, with what their requests need. */
export function dueBatches(
  db: Journal,
  fileId: number,
  now: number,
  afterId: number,
  limit: number,
): BatchToSend[] {
  const rows = sql(db, `${DUE_BATCHES} AND b.id > ? ORDER BY b.id LIMIT ?`).all(
    fileId,
    now,
    afterId,
    limit,
  ) as DueRow[];
  return rows.map(toBatchToSend);
}

/**
 * These batches go before the other due batches of their file, whatever their ids. Intake names
 * the few that took rows it settled once the file was read (src/plan/doubts.ts): their rows lie
 * anywhere in the file, and the result file, written in row order while answers come in, waits
 * for them.
 */
export function sendFirst(db: Journal, batchIds: Iterable<number>): void {
  for (const id of batchIds) insideOf(db).firstToSend.add(id);
}

/**
 * The batches to send first (sendFirst) that are due now: each is handed out once, then is an
 * ordinary batch.
 */
export function dueFirst(db: Journal, fileId: number, now: number): BatchToSend[] {
  const ids = insideOf(db).firstToSend;
  if (ids.size === 0) return [];
  const due: BatchToSend[] = [];
  for (const id of ids) {
    const row = sql(db, `${DUE_BATCHES} AND b.id = ?`).get(fileId, now, id) as DueRow | undefined;
    if (!row) continue; // another file's, or not due yet
    ids.delete(id);
    due.push(toBatchToSend(row));
  }
  return due;
}

/**
 * Written BEFORE the request leaves: from here until its outcome is recorded the batch is
 * `sending`, and a crash leaves it so, which the next run treats as "may have been received".
 * Two statements that must commit together: call it inside a transaction (the sender's write
 * queue), and send only once that has committed. `batch` is the batch as read when it was picked:
 * it is claimed only if it is still that batch (same random req_id: a row id freed by a rolled
 * back write and reused by another file's intake is not it) and still planned.
 */
export function startAttempt(
  db: Journal,
  batch: Pick<BatchRecord, 'id' | 'req_id'>,
  reqId: string | null,
): number | undefined {
  const now = nowIso();
  // Only a planned batch may start: whoever else moved it (another run, a recovery) owns it now.
  if (
    !moveBatch(db, batch.id, 'sending', [['attempts = attempts + 1']], {
      onlyFrom: ['planned'],
      reqId: batch.req_id,
      now,
    })
  )
    return undefined;
  noteAttemptStarted(db, { batchId: batch.id, batchReqId: batch.req_id, reqId, startedAt: now });
  return Number(
    sql(db, 'INSERT INTO attempts (batch_id, req_id, started_at) VALUES (?, ?, ?)').run(
      batch.id,
      reqId,
      now,
    ).lastInsertRowid,
  );
}

/**
 * The attempt's outcome and where the batch goes: call it inside a transaction, like startAttempt.
 */
export function finishAttempt(
  db: Journal,
  attemptId: number,
  batchId: number,
  result: AttemptResult,
  transition: Transition,
): void {
  const now = nowIso();
  sql(
    db,
    'UPDATE attempts SET finished_at = ?, outcome = ?, status_code = ?, reason = ? WHERE id = ?',
  ).run(now, result.outcome, result.statusCode, result.reason, attemptId);
  // Doubt starts when the request left, not when we gave up waiting: that is the day the
  // provider's reqId memory counts from.
  const startedAt = sqlPluck(db, 'SELECT started_at FROM attempts WHERE id = ?').get(
    attemptId,
  ) as string;
  applyTransition(db, batchId, transition, now, startedAt);
}

/** `doubtSince`: when the request that may have been received left (default: now). */
export function applyTransition(
  db: Journal,
  batchId: number,
  t: Transition,
  now = nowIso(),
  doubtSince = now,
): void {
  switch (t.to) {
    case 'accepted':
      moveBatch(
        db,
        batchId,
        'accepted',
        [
          statusOf(t.statusCode, t.statusMsg ?? null),
          ['sms_message_sid = ?', t.smsMessageSid],
          ['date_created = ?', t.dateCreated],
        ],
        { now },
      );
      unsuppressIfAccepted(db, batchId);
      return;
    case 'failed':
    case 'unknown':
      moveBatch(db, batchId, t.to, [statusOf(t.statusCode, t.statusMsg)], { now });
      if (t.to === 'failed') suppressIfRefused(db, batchId, t.statusCode);
      return;
    case 'planned':
      moveBatch(
        db,
        batchId,
        'planned',
        [
          ['next_attempt_at = ?', t.nextAttemptAt],
          statusOf(t.statusCode, t.statusMsg),
          ['maybe_sent = max(maybe_sent, ?)', t.doubt],
          [
            'first_doubt_at = CASE WHEN ? > 0 AND first_doubt_at IS NULL THEN ? ELSE first_doubt_at END',
            t.doubt,
            doubtSince,
          ],
          ['deferrals = deferrals + ?', t.deferral ? 1 : 0],
          [
            'attempts = CASE WHEN ? THEN 0 ELSE attempts - ? END',
            t.resetAttempts ? 1 : 0,
            t.refundAttempt ? 1 : 0,
          ],
        ],
        { now },
      );
      return;
    case 'split':
      splitBatch(db, batchId, t, now);
      return;
  }
}

/** Number-rejected: the batch is replaced by its two halves, each with a fresh reqId. */
function splitBatch(
  db: Journal,
  batchId: number,
  t: { statusCode: string; statusMsg: string },
  now: string,
): void {
  const parent = getBatch(db, batchId);
  const phones = batchPhones(db, batchId);
  const middle = Math.ceil(phones.length / 2);
  for (const half of [phones.slice(0, middle), phones.slice(middle)]) {
    if (half.length > 0) moveToNewBatch(db, parent, half, now);
  }
  moveBatch(db, batchId, 'split', [statusOf(t.statusCode, t.statusMsg)], { now });
}

const statusOf = (code: string | null, msg: string | null): Assignment => [
  'status_code = ?, status_msg = ?',
  code,
  msg,
];

/** A new planned batch (fresh reqId) for some of a batch's numbers; their rows follow them. */
export function moveToNewBatch(
  db: Journal,
  from: BatchRecord,
  phones: string[],
  now = nowIso(),
): number {
  const childId = Number(
    sql(
      db,
      `INSERT INTO batches (file_id, group_id, parent_id, req_id, numbers, state, created_at, updated_at)
       VALUES (?, ?, ?, ?, ?, 'planned', ?, ?)`,
    ).run(from.file_id, from.group_id, from.id, newReqId(), phones.length, now, now)
      .lastInsertRowid,
  );
  sql(db, 'INSERT INTO batch_numbers (batch_id, phones) VALUES (?, ?)').run(
    childId,
    phones.join(','),
  );
  // before it can be sent: an intent of it would name a batch a crash could take back
  needsJournalCommit(db);
  const move = sql(db, 'UPDATE rows SET batch_id = ? WHERE batch_id = ? AND phone = ?');
  for (const phone of phones) move.run(childId, from.id, phone);
  return childId;
}

/**
 * A batch left `sending` by a crash or a forced exit may have been received. With a reqId it is
 * retried (same reqId); without one it is unknown and never resent automatically.
 * Returns how many batches were recovered.
 */
export function recoverInterrupted(db: Journal, fileId: number, reqIdOn: boolean): number {
  const interrupted = sqlPluck(
    db,
    "SELECT id FROM batches WHERE file_id = ? AND state = 'sending'",
  ).all(fileId) as number[];
  if (interrupted.length === 0) return 0;
  insideOf(db).transaction(() => {
    const now = nowIso();
    for (const batchId of interrupted) {
      const leftAt =
        (sqlPluck(
          db,
          'SELECT min(started_at) FROM attempts WHERE batch_id = ? AND finished_at IS NULL',
        ).get(batchId) as string | null) ?? now;
      sql(
        db,
        "UPDATE attempts SET finished_at = ?, outcome = 'interrupted', reason = 'the program stopped before the outcome was recorded' WHERE batch_id = ? AND finished_at IS NULL",
      ).run(now, batchId);
      const transition: Transition = reqIdOn
        ? {
            to: 'planned',
            nextAttemptAt: 0,
            doubt: 1,
            statusCode: null,
            statusMsg: 'interrupted mid-request; retried with the same reqId',
          }
        : {
            to: 'unknown',
            statusCode: null,
            statusMsg:
              'interrupted mid-request: it may have been sent; not resent because reqId is off',
          };
      applyTransition(db, batchId, transition, now, leftAt);
    }
  })();
  return interrupted.length;
}
