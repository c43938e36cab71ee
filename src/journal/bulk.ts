// Bulk writes (a file's intake) in large transactions: each commit appends every page it touched
// to the WAL, and the rows' unique index is touched all over, so committing every 50,000 rows
// instead of every chunk saves about a third of intake's time.
//
// The transaction stays open across the intake's awaits. Anything that must be on disk before a
// request leaves goes through the write queue (writeQueue.ts), whose writes join the open bulk
// transaction (as a savepoint) and then commit it; other writes in the meantime simply join it.
import { SmsdropError } from '../errors.js';
import { intentsLost, journalCommitted } from './intents.js';
import { connectionOf, insideOf, type Journal } from './connection.js';

/** Rows an intake writes per transaction (the bench's journal floor uses the same). */
export const ROWS_PER_COMMIT = 50_000;

/**
 * While requests' commits are deferred (intents.ts), intake's batches are released only after a
 * commit holds them: so the first commits come after 5,000 rows, then 10,000, doubling up to
 * ROWS_PER_COMMIT, and the first requests start early.
 */
const FIRST_ROWS_PER_COMMIT = 5_000;

/**
 * How many open bulk transactions of this connection were rolled back as a whole (a full disk or
 * an I/O error during a write that joined it, or during its commit). A row writer compares it with
 * the count when it started: rows it wrote may be gone, so its intake must stop, not go on as if
 * they were in the journal.
 */
export function bulkLosses(db: Journal): number {
  return insideOf(db).bulk.losses;
}

/** Rows a writer wrote were rolled back with the bulk transaction (see bulkLosses). */
export class RowsLostError extends SmsdropError {
  constructor() {
    super(
      'E_JOURNAL_WRITE',
      'the journal rolled back rows of this file it was writing (a full disk? an I/O error?)',
    );
  }
}

/**
 * Runs `write` (which writes `rows` rows) inside the open bulk transaction, opening one if needed.
 */
export function bulkWrite(db: Journal, rows: number, write: () => void): void {
  if (!insideOf(db).bulk.open) {
    // The write lock first: another connection of this process may write in between (see
    // JournalInside.transaction).
    connectionOf(db).exec('BEGIN IMMEDIATE');
    insideOf(db).bulk.open = { rows: 0, since: Date.now() };
  }
  try {
    write();
  } catch (err) {
    noteIfRolledBack(db);
    throw err;
  }
  const open = insideOf(db).bulk.open;
  if (!open) return; // rolled back and noted meanwhile
  open.rows += rows;
  if (open.rows >= commitSize(db)) commitBulk(db);
}

/**
 * Successful commits of the connection's bulk transactions so far: what a writer wrote before the
 * count moved is in the journal for good.
 */
export function bulkCommits(db: Journal): number {
  return insideOf(db).bulk.commits;
}

/** Milliseconds the open bulk transaction has been open (undefined: none is). */
export function bulkOpenMs(db: Journal): number | undefined {
  const open = insideOf(db).bulk.open;
  return open ? Date.now() - open.since : undefined;
}

/** A new intake starts: its commits start small again (see FIRST_ROWS_PER_COMMIT). */
export function startBulkRamp(db: Journal): void {
  insideOf(db).bulk.nextSize = FIRST_ROWS_PER_COMMIT;
}

function commitSize(db: Journal): number {
  return insideOf(db).bulk.nextSize ?? ROWS_PER_COMMIT;
}

function noteCommit(db: Journal): void {
  const bulk = insideOf(db).bulk;
  bulk.commits++;
  if (bulk.nextSize !== undefined) bulk.nextSize = Math.min(bulk.nextSize * 2, ROWS_PER_COMMIT);
  journalCommitted(db);
}

/**
 * After a write that threw: a full disk or an I/O error makes SQLite roll back the whole
 * transaction, not only the failed statement or savepoint. The bulk transaction is then gone.
 */
export function noteIfRolledBack(db: Journal): void {
  if (insideOf(db).bulk.open && !connectionOf(db).inTransaction) noteLoss(db);
}

function noteLoss(db: Journal): void {
  insideOf(db).bulk.open = undefined;
  insideOf(db).bulk.losses++;
  intentsLost(db);
}

/**
 * Commits the open bulk transaction, if any. Also after a failed intake: what it wrote is then
 * deleted in the open (discardIntake), and other writes that joined it are kept.
 */
export function commitBulk(db: Journal): void {
  if (!insideOf(db).bulk.open) return;
  insideOf(db).bulk.open = undefined;
  if (!connectionOf(db).inTransaction) return;
  try {
    connectionOf(db).exec('COMMIT');
    noteCommit(db);
  } catch (err) {
    // A disk-full or I/O error makes SQLite roll the transaction back by itself. Should it be
    // left open (busy), roll it back: writes joining it later would be savepoints of a transaction
    // nobody commits, and their callers would take them for committed.
    if (connectionOf(db).inTransaction) connectionOf(db).exec('ROLLBACK');
    noteLoss(db);
    throw err;
  }
}
