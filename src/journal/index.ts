// The SQLite journal's door: open it as a writer (the one process that sends), as a reader
// (reports, the HTTP surface of another process) or as a scratch journal (a dry run), and get its
// ports (src/ports/). Everything else in src/journal/ is private to it, and only src/journals/
// opens it (eslint.config.js).
import { acquireLock } from '../datadir/lock.js';
import { startCheckpoints } from './checkpoints.js';
import { insideOf } from './connection.js';
import { enableIntents, replayIntents } from './intents.js';
import type { Journal } from './connection.js';
import { journalPath } from './paths.js';
import { openJournal } from './open.js';
import { sql } from './sql.js';
import { handleOf } from './handle.js';
import type { JournalHandle } from '../ports/handle.js';
import type { ReadStore } from '../ports/reads.js';
import type { SuppressedNumber } from '../ports/records.js';

export { journalPath };
export { backupJournal } from './backup.js';
export { IllegalTransitionError } from './moves.js';
export { RowsLostError } from './bulk.js';
export { JournalLostError } from './intents.js';
export { openReader } from './reader.js';
export { openControl, openSuppressionList } from './smallStores.js';
export { openTableDump } from './tableDump.js';

export interface WriterOptions {
  /** Who holds the data-directory lock (shown to a second process). */
  role: string;
  /** 'full' also survives power loss, at a cost per commit. */
  synchronous: 'normal' | 'full';
  /** Requests carry their batch's reqId: requests during an intake are made safe by intents. */
  reqIdOn: boolean;
  /** The journal lost requests' records (a rolled-back transaction): this process must stop. */
  onLost: () => void;
  /** The WAL is checkpointed on a thread of its own (checkpoints.ts): for processes that send. */
  checkpointThread?: boolean;
}

export interface OpenedWriter {
  handle: JournalHandle;
  /** Requests a crash cut off from their journal commit, put back as "may have been received". */
  replayed: number;
  /** Of those, the ones naming batches the journal does not have. */
  missing: number;
}

/**
 * The journal of dataDir for the one process that writes it: the data directory's lock, the
 * journal opened (created, upgraded), requests a crash cut off put back from their intents
 * before anything reads it, and then, with reqId on, intents for requests started during an
 * intake. handle.close() releases it all.
 */
export function openWriter(dataDir: string, options: WriterOptions): OpenedWriter {
  const lock = acquireLock(dataDir, options.role);
  let db: Journal | undefined;
  try {
    db = openJournal(journalPath(dataDir), { synchronous: options.synchronous });
    const { replayed, missing } = replayIntents(db);
    if (options.reqIdOn) enableIntents(db, options.synchronous, options.onLost);
    if (options.checkpointThread) startCheckpoints(db, options.synchronous);
    return { handle: handleOf(db, () => lock.release()), replayed, missing };
  } catch (err) {
    db?.close();
    lock.release();
    throw err;
  }
}

/**
 * A throwaway journal at `file` (a dry run plans in one), no lock; with `suppressedFrom`, its
 * suppression list is copied in, so that the plan leaves those numbers out too.
 */
export async function openScratch(
  file: string,
  suppressedFrom?: Pick<ReadStore, 'suppressedNumbers'>,
): Promise<JournalHandle> {
  const suppressed = suppressedFrom ? await suppressedFrom.suppressedNumbers() : [];
  const db = openJournal(file);
  try {
    copySuppressed(db, suppressed);
  } catch (err) {
    db.close();
    throw err;
  }
  return handleOf(db);
}

function copySuppressed(db: Journal, numbers: readonly SuppressedNumber[]): void {
  if (numbers.length === 0) return;
  const insert = sql(
    db,
    'INSERT OR IGNORE INTO suppressed (phone, reason, source, added_at) VALUES (?, ?, ?, ?)',
  );
  insideOf(db).transaction(() => {
    for (const n of numbers) insert.run(n.phone, n.reason, n.source, n.addedAt);
  })();
}
