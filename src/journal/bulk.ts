// Bulk writes (a file's intake) in large transactions: each commit appends every page it touched
// to the WAL, and the rows' unique index is touched all over, so committing every 50,000 rows
// instead of every chunk saves about a third of intake's time.
//
// The transaction stays open across the intake's awaits. Anything that must be on disk before a
// request leaves goes through the write queue (writeQueue.ts), whose writes join the open bulk
// transaction (as a savepoint) and then commit it; other writes in the meantime simply join it.
import { intentsLost, journalCommitted } from './intents.js';
import type { Db } from './open.js';

/** Rows an intake writes per transaction (the bench's journal floor uses the same). */
export const ROWS_PER_COMMIT = 50_000;

/**
 * While requests' commits are deferred (intents.ts), intake's batches are released only after a
 * commit holds them: so the first commits come after 5,000 rows, then 10,000, doubling up to
 * ROWS_PER_COMMIT, and the first requests start early.
 */
const FIRST_ROWS_PER_COMMIT = 5_000;

/** Rows written in the open bulk transaction, and when it began. */
const pending = new WeakMap<Db, { rows: number; since: number }>();
/** Commits of each connection's bulk transactions (see bulkCommits), and the size of the next. */
const commits = new WeakMap<Db, { count: number; nextSize: number }>();
/** Bulk transactions of a connection that SQLite rolled back (see bulkLosses). */
const losses = new WeakMap<Db, number>();

/**
 * How many open bulk transactions of this connection were rolled back as a whole (a full disk or
 * an I/O error during a write that joined it, or during its commit). A row writer compares it with
 * the count when it started: rows it wrote may be gone, so its intake must stop, not go on as if
 * they were in the journal.
 */
export function bulkLosses(db: Db): number {
  return losses.get(db) ?? 0;
}

/** Rows a writer wrote were rolled back with the bulk transaction (see bulkLosses). */
export class RowsLostError extends Error {
  constructor() {
    super('the journal rolled back rows of this file it was writing (a full disk? an I/O error?)');
    this.name = 'RowsLostError';
  }
}

/** Runs `write` (which writes `rows` rows) inside the open bulk transaction, opening one if needed. */
export function bulkWrite(db: Db, rows: number, write: () => void): void {
  if (!pending.has(db)) {
    db.exec('BEGIN');
    pending.set(db, { rows: 0, since: Date.now() });
  }
  try {
    write();
  } catch (err) {
    noteIfRolledBack(db);
    throw err;
  }
  const open = pending.get(db)!;
  open.rows += rows;
  if (open.rows >= commitSize(db)) commitBulk(db);
}

/**
 * Successful commits of the connection's bulk transactions so far: what a writer wrote before the
 * count moved is in the journal for good.
 */
export function bulkCommits(db: Db): number {
  return commits.get(db)?.count ?? 0;
}

/** Milliseconds the open bulk transaction has been open (undefined: none is). */
export function bulkOpenMs(db: Db): number | undefined {
  const open = pending.get(db);
  return open ? Date.now() - open.since : undefined;
}

/** A new intake starts: its commits start small again (see FIRST_ROWS_PER_COMMIT). */
export function startBulkRamp(db: Db): void {
  commits.set(db, { count: bulkCommits(db), nextSize: FIRST_ROWS_PER_COMMIT });
}

function commitSize(db: Db): number {
  return commits.get(db)?.nextSize ?? ROWS_PER_COMMIT;
}

function noteCommit(db: Db): void {
  const c = commits.get(db) ?? { count: 0, nextSize: ROWS_PER_COMMIT };
  commits.set(db, { count: c.count + 1, nextSize: Math.min(c.nextSize * 2, ROWS_PER_COMMIT) });
  journalCommitted(db);
}

/**
 * After a write that threw: a full disk or an I/O error makes SQLite roll back the whole
 * transaction, not only the failed statement or savepoint. The bulk transaction is then gone.
 */
export function noteIfRolledBack(db: Db): void {
  if (pending.has(db) && !db.inTransaction) noteLoss(db);
}

function noteLoss(db: Db): void {
  pending.delete(db);
  losses.set(db, bulkLosses(db) + 1);
  intentsLost(db);
}

/**
 * Commits the open bulk transaction, if any. Also after a failed intake: what it wrote is then
 * deleted in the open (discardIntake), and other writes that joined it are kept.
 */
export function commitBulk(db: Db): void {
  if (!pending.has(db)) return;
  pending.delete(db);
  if (!db.inTransaction) return;
  try {
    db.exec('COMMIT');
    noteCommit(db);
  } catch (err) {
    // A disk-full or I/O error makes SQLite roll the transaction back by itself. Should it be
    // left open (busy), roll it back: writes joining it later would be savepoints of a transaction
    // nobody commits, and their callers would take them for committed.
    if (db.inTransaction) db.exec('ROLLBACK');
    noteLoss(db);
    throw err;
  }
}
