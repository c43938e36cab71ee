// Bulk writes (a file's intake) in large transactions: each commit appends every page it touched
// to the WAL, and the rows' unique index is touched all over, so committing every 50,000 rows
// instead of every chunk saves about a third of intake's time.
//
// The transaction stays open across the intake's awaits. Anything that must be on disk before a
// request leaves goes through the write queue (writeQueue.ts), whose writes join the open bulk
// transaction (as a savepoint) and then commit it; other writes in the meantime simply join it.
import type { Db } from './open.js';

const ROWS_PER_COMMIT = 50_000;

const pending = new WeakMap<Db, number>();

/** Runs `write` (which writes `rows` rows) inside the open bulk transaction, opening one if needed. */
export function bulkWrite(db: Db, rows: number, write: () => void): void {
  if (!pending.has(db)) {
    db.exec('BEGIN');
    pending.set(db, 0);
  }
  write();
  const written = pending.get(db)! + rows;
  if (written >= ROWS_PER_COMMIT) commitBulk(db);
  else pending.set(db, written);
}

/**
 * Commits the open bulk transaction, if any. Also after a failed intake: what it wrote is then
 * deleted in the open (discardIntake), and other writes that joined it are kept.
 */
export function commitBulk(db: Db): void {
  if (!pending.has(db)) return;
  pending.delete(db);
  // A disk-full or I/O error makes SQLite roll the transaction back by itself.
  if (db.inTransaction) db.exec('COMMIT');
}
