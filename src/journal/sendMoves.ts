// Batches in the journal: planned from a file's rows, then driven through their states by the
// sender (see states.ts for the state machine). Every change that goes with a request outcome is
// one transaction: the attempt, the batch and its rows move together or not at all.
import os from 'node:os';
import type { BatchRecord } from '../ports/records.js';
import { insideOf, type Journal } from './connection.js';
import { noteAttemptStarted } from './intents.js';
import * as rules from '../journalRules/outcomes.js';
import { recoverInterrupted as recoverRule } from '../journalRules/recovery.js';
import { runRule, SQLITE_DIALECT, SQLITE_RULES } from './rules.js';
import { nowIso, sql, sqlPluck } from './sql.js';
import { type DueRow, toBatchToSend } from '../ports/dueRow.js';
import type { AttemptResult, BatchToSend, Transition } from '../ports/records.js';

const PHONES = SQLITE_DIALECT.batchPhones('b');
const DUE_BATCHES = `SELECT b.*, ${SQLITE_DIALECT.appOf('g')} AS g_app_id, g.template_id AS g_template_id, g.datas AS g_datas, ${PHONES} AS g_phones
  FROM batches b JOIN groups g ON g.id = b.group_id
  WHERE b.file_id = ? AND b.state = 'planned' AND b.next_attempt_at <= ? AND ${PHONES} IS NOT NULL`;

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

/** The process an attempt names (attempts.node): one server, but each start is another process. */
const THIS_PROCESS = `${os.hostname()}:${process.pid}`;

/**
 * The attempt, before its request leaves (src/journalRules/outcomes.ts, startAttempt), noted for
 * the intents (intents.ts). Two statements that must commit together: call it inside a
 * transaction (the sender's write queue), and send only once that has committed.
 */
export function startAttempt(
  db: Journal,
  batch: Pick<BatchRecord, 'id' | 'req_id'>,
  reqId: string | null,
): number | undefined {
  const now = nowIso();
  sql(db, 'INSERT INTO processes (name) VALUES (?) ON CONFLICT (name) DO NOTHING').run(
    THIS_PROCESS,
  );
  const attemptId = runRule(db, rules.startAttempt(SQLITE_RULES, batch, reqId, now, THIS_PROCESS));
  if (attemptId !== undefined)
    noteAttemptStarted(db, { batchId: batch.id, batchReqId: batch.req_id, reqId, startedAt: now });
  return attemptId;
}

/**
 * The attempt's outcome and where the batch goes (src/journalRules/outcomes.ts): call it inside a
 * transaction, like startAttempt.
 */
export function finishAttempt(
  db: Journal,
  attemptId: number,
  batchId: number,
  result: AttemptResult,
  transition: Transition,
): void {
  runRule(
    db,
    rules.finishAttempt(SQLITE_RULES, { id: attemptId, result }, batchId, transition, nowIso()),
  );
}

/** `doubtSince`: when the request that may have been received left (default: now). */
export function applyTransition(
  db: Journal,
  batchId: number,
  t: Transition,
  now = nowIso(),
  doubtSince = now,
): void {
  runRule(db, rules.applyTransition(SQLITE_RULES, batchId, t, now, doubtSince));
}

/** A new planned batch (fresh reqId) for some of a batch's numbers; their rows follow them. */
export function moveToNewBatch(
  db: Journal,
  from: BatchRecord,
  phones: string[],
  now = nowIso(),
): number {
  return runRule(db, rules.moveToNewBatch(SQLITE_RULES, from, phones, now));
}

/**
 * A batch left `sending` by a crash or a forced exit may have been received
 * (src/journalRules/recovery.ts). Returns how many batches were recovered.
 */
export function recoverInterrupted(db: Journal, fileId: number, reqIdOn: boolean): number {
  const interrupted = sqlPluck(
    db,
    "SELECT id FROM batches WHERE file_id = ? AND state = 'sending'",
  ).all(fileId) as number[];
  if (interrupted.length === 0) return 0;
  insideOf(db).transaction(() =>
    runRule(db, recoverRule(SQLITE_RULES, interrupted, reqIdOn, nowIso())),
  )();
  return interrupted.length;
}
