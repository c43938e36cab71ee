// Requests that start while an intake holds its bulk transaction open (bulk.ts), made durable in
// a small file of their own (journal.intents.sqlite) instead of by committing the journal.
//
// Why: a request may leave only once its attempt is on disk. Committing the journal for that
// commits the intake's rows too, and with numbers in no order the rows' index entries land on
// pages all over their indexes: a commit every turn of the event loop writes about a page to the
// WAL per row read (docs/benchmark-history.md, "Intents"). Here the journal commits
// every tens of thousands of rows, and each turn's requests commit only their intents: one row each
// in this file (batch, reqId, start time), a page or two per turn.
//
// Why it is safe:
// - A batch is sent only once its definition (its numbers, its reqId, its rows) is committed in
//   the journal: intake releases a batch only after a commit that holds it
//   (plan/closedBatches.ts), and a turn that creates batches (a split into halves) commits the
//   journal itself (the rules' durable step, rules.ts).
// - After a crash, the journal has rolled back to its last commit: the attempts started since then,
//   and the outcomes recorded since then, are gone from it. replayIntents puts each attempt back
//   as started with no answer, exactly as a crash in mid-request leaves one, so the next run treats
//   the batch as "may have been received": retried with the same reqId, which the provider refuses
//   to send twice on the same day (160054, counted as accepted), and never resent after that day.
//   A lost answer thus costs a request, never a second message. Only with reqId on: without it a
//   lost answer would leave the batch unknown, so commits then stay per turn (openRuntime).
// - The journal commits at least every MAX_DEFERRED_MS while requests run (writeQueue.ts), so a
//   crash loses at most that much of answers.
import Database, { setSynchronous } from './sqlite.js';
import { SmsdropError } from '../errors.js';
import { connectionOf, insideOf, type Intent, type Journal } from './connection.js';
import { moveBatch } from './moves.js';
import { intentsPath } from './paths.js';
import { SQLITE_DIALECT } from './rules.js';
import { BATCH_STATE, UNSETTLED_STATES } from '../ports/states.js';
import { storedAttemptReqId } from '../journalRules/attempts.js';

/**
 * The journal rolled back a transaction that held requests' records (a full disk, an I/O error):
 * what this process believes of them (attempt ids, outcomes, claims) is no longer in the journal.
 * The write queue refuses every write from then on, so nothing more is sent or recorded by this
 * process; the intents stay, and the next start puts the lost attempts back.
 */
export class JournalLostError extends SmsdropError {
  constructor() {
    super(
      'E_JOURNAL_LOST',
      "the journal rolled back the records of requests in progress (a full disk? an I/O error?): nothing more is sent by this process; restart smsdrop once the journal's disk is well, and those requests are settled from their intents",
    );
  }
}

/**
 * From now on, requests of this connection that start while a bulk transaction is open are made
 * durable by an intent each (the caller holds the data directory's lock). Call replayIntents first.
 */
export function enableIntents(
  db: Journal,
  synchronous: 'normal' | 'full' = 'normal',
  onLost?: () => void,
): void {
  if (insideOf(db).intents) return;
  const side = new Database(intentsPath(db.name));
  side.pragma('journal_mode = WAL');
  setSynchronous(side, synchronous);
  side.exec(
    `CREATE TABLE IF NOT EXISTS intents (
       seq INTEGER PRIMARY KEY, batch_id INTEGER NOT NULL, batch_req_id TEXT NOT NULL, req_id TEXT, started_at TEXT NOT NULL
     )`,
  );
  const lastSeq =
    (side.prepare('SELECT coalesce(max(seq), 0) FROM intents').pluck().get() as number) ?? 0;
  const insert = side.prepare(
    'INSERT INTO intents (seq, batch_id, batch_req_id, req_id, started_at) VALUES (?, ?, ?, ?, ?)',
  );
  const deleteCovered = side.prepare('DELETE FROM intents WHERE seq <= ?');
  insideOf(db).intents = {
    side,
    insert,
    deleteCovered,
    noted: [],
    coveredSeq: 0,
    lastSeq,
    mustCommit: false,
    lost: false,
    onLost,
  };
}

export function intentsEnabled(db: Journal): boolean {
  return insideOf(db).intents !== undefined;
}

export function closeIntents(db: Journal): void {
  const log = insideOf(db).intents;
  if (!log) return;
  insideOf(db).intents = undefined;
  log.side.close();
}

/** The open transaction was rolled back (bulk.ts): see JournalLostError. */
export function intentsLost(db: Journal): void {
  const log = insideOf(db).intents;
  if (!log || log.lost) return;
  log.lost = true;
  log.noted = [];
  log.onLost?.();
}

/** Whether this connection lost requests' records (see JournalLostError). */
export function journalLost(db: Journal): boolean {
  return insideOf(db).intents?.lost ?? false;
}

/** The turn's writes failed (rolled back): the attempts they noted never happened. */
export function forgetNoted(db: Journal): void {
  const log = insideOf(db).intents;
  if (log) log.noted = [];
}

/** startAttempt tells of each attempt it wrote (nothing to do unless intents are enabled). */
export function noteAttemptStarted(db: Journal, intent: Intent): void {
  insideOf(db).intents?.noted.push(intent);
}

/** Whether this turn's writes asked for a journal commit (and forgets it: the caller commits). */
export function takeMustCommit(db: Journal): boolean {
  const log = insideOf(db).intents;
  if (!log?.mustCommit) return false;
  log.mustCommit = false;
  return true;
}

/**
 * Writes and commits the intents noted this turn in the side file: once this returns, their
 * requests may leave. Intents already covered by a journal commit are deleted on the way.
 */
export function commitIntents(db: Journal): void {
  const log = insideOf(db).intents;
  if (!log || log.noted.length === 0) return;
  const noted = log.noted;
  log.noted = [];
  log.side.transaction(() => {
    if (log.coveredSeq > 0 && !log.lost) log.deleteCovered.run(log.coveredSeq);
    for (const intent of noted)
      log.insert.run(
        ++log.lastSeq,
        intent.batchId,
        intent.batchReqId,
        intent.reqId,
        intent.startedAt,
      );
  })();
}

/**
 * The journal committed: every attempt written so far is in it. Intents noted this turn are
 * forgotten, and those in the side file no longer needed (deleted with the next write).
 */
export function journalCommitted(db: Journal): void {
  const log = insideOf(db).intents;
  if (!log || log.lost) return; // the intents of what was lost must stay
  log.noted = [];
  log.coveredSeq = log.lastSeq;
}

/** The intents of a side file, in the order they were noted. */
function intentsIn(side: Database.Database) {
  const hasTable = side.prepare("SELECT 1 FROM sqlite_master WHERE name = 'intents'").get();
  if (!hasTable) return [];
  return side
    .prepare('SELECT batch_id, batch_req_id, req_id, started_at FROM intents ORDER BY seq')
    .all() as {
    batch_id: number;
    batch_req_id: string;
    req_id: string | null;
    started_at: string;
  }[];
}

/**
 * Puts back in the journal every attempt whose intent is in the side file but which the journal
 * lost (a crash, or a rolled-back bulk transaction): started, no answer, its batch `sending`,
 * which recoverInterrupted then handles like any request cut short. Idempotent. Returns how many
 * attempts were put back, and the intents whose batch is not in the journal (never expected: a
 * batch is committed before it is sent).
 */
export function replayIntents(db: Journal): { replayed: number; missing: number } {
  // Within an open transaction, attempts not yet committed would pass for recorded, and their
  // intents would be deleted.
  const connection = connectionOf(db);
  if (connection.inTransaction)
    throw new SmsdropError('E_INTERNAL', 'replayIntents: commit the journal first');
  const file = intentsPath(db.name);
  const log = insideOf(db).intents;
  let side: Database.Database;
  try {
    side = log?.side ?? new Database(file, { fileMustExist: true });
  } catch {
    return { replayed: 0, missing: 0 }; // no side file: nothing was ever deferred here
  }
  try {
    const intents = intentsIn(side);
    if (intents.length === 0) return { replayed: 0, missing: 0 };
    const counts = connection.transaction(() => putBack(db, intents))();
    side.exec('DELETE FROM intents');
    if (log && !log.lost) log.coveredSeq = log.lastSeq;
    return counts;
  } finally {
    if (!log) side.close();
  }
}

/**
 * For a connection that writes beside the journal's owner (a command such as `smsdrop cancel`
 * while the daemon runs, or after it died: smallStores.ts, openControl), inside its write
 * transaction: puts back the attempts of intents whose process died before its journal committed
 * them, as the owner's next start would (replayIntents). The write lock this transaction holds
 * means no other is open, so an intent whose attempt the journal lacks was lost with its process:
 * left alone, a cancel would find its batch planned and cancel a batch whose request may have been
 * received. The intents stay in the side file, for the owner to delete once its journal commits.
 * Returns how many attempts were put back. A connection with intents of its own (the owner)
 * replayed them at its start, and sees its own attempts: nothing to do.
 */
export function putBackOrphanedIntents(db: Journal): number {
  if (insideOf(db).intents || !connectionOf(db).inTransaction) return 0;
  let side: Database.Database;
  try {
    side = new Database(intentsPath(db.name), { readonly: true, fileMustExist: true });
  } catch {
    return 0; // no side file: nothing was ever deferred here
  }
  try {
    return putBack(db, intentsIn(side)).replayed;
  } finally {
    side.close();
  }
}

/**
 * Each intent whose attempt the journal lacks put back as started with no answer, its batch
 * `sending` (inside the caller's transaction).
 */
function putBack(
  db: Journal,
  intents: ReturnType<typeof intentsIn>,
): { replayed: number; missing: number } {
  const connection = connectionOf(db);
  const counts = { replayed: 0, missing: 0 };
  const recorded = connection.prepare(
    `SELECT 1 FROM attempts WHERE batch_id = ? AND started_at = ${SQLITE_DIALECT.storedTime('?')}`,
  );
  const exists = connection.prepare('SELECT 1 FROM batches WHERE id = ? AND req_id = ?');
  const insert = connection.prepare(
    `INSERT INTO attempts (batch_id, req_id, started_at) VALUES (?, ?, ${SQLITE_DIALECT.storedTime('?')})`,
  );
  for (const i of intents) {
    if (recorded.get(i.batch_id, i.started_at)) continue;
    if (!exists.get(i.batch_id, i.batch_req_id)) {
      counts.missing++;
      continue;
    }
    // A batch whose outcome the journal has is left alone (an intent of a write that failed).
    const claimed = moveBatch(db, i.batch_id, BATCH_STATE.sending, [['attempts = attempts + 1']], {
      onlyFrom: UNSETTLED_STATES,
      now: i.started_at,
    });
    if (!claimed) continue;
    insert.run(i.batch_id, storedAttemptReqId(i.req_id, i.batch_req_id), i.started_at);
    counts.replayed++;
  }
  return counts;
}
