// The journal opened for reading only: no lock, so reports work while the daemon sends (WAL keeps
// readers and the writer out of each other's way). A reader never changes a journal another
// process holds: one written by an older version (missing a migration) is upgraded only under the
// data directory's lock, and while a daemon or a `send` holds it the reader stops with
// E_JOURNAL_NEEDS_UPGRADE instead.
import { existsSync } from 'node:fs';
import { SmsdropError } from '../errors.js';
import { acquireLock, type Lock, LockedError } from '../datadir/lock.js';
import { MIGRATIONS } from './migrations.js';
import type { Journal } from './connection.js';
import { journalPath } from './paths.js';
import { openJournal } from './open.js';
import { appliedMigrations } from './reportReads.js';
import { type JournalReader, readerOf } from '../ports/handle.js';
import { sqliteReadStore } from './readStore.js';
import { sqliteMaintenance } from './smallStores.js';
import { sqliteRetryCounts } from './retry.js';

/** The journal of dataDir, read-only; undefined when nothing was ever journalled there. */
export function openReader(dataDir: string): JournalReader | undefined {
  const db = openReadOnly(dataDir);
  if (!db) return undefined;
  return readerOf(sqliteReadStore(db), sqliteRetryCounts(db), sqliteMaintenance(db, true), () =>
    db.close(),
  );
}

/** The connection openReader reads through (upgraded first when it may be). */
export function openReadOnly(dataDir: string): Journal | undefined {
  const file = journalPath(dataDir);
  if (!existsSync(file)) return undefined;
  const db = openJournal(file, { readonly: true });
  // Every migration, not only the highest: a journal may lack one below it.
  const applied = appliedMigrations(db);
  if (MIGRATIONS.every((m) => applied.has(m.version))) return db;
  db.close();
  upgradeUnlessHeld(dataDir, file);
  return openJournal(file, { readonly: true });
}

/** Upgrades the journal (migrations, and the one-time VACUUM) if no other process holds it. */
function upgradeUnlessHeld(dataDir: string, file: string): void {
  let lock: Lock;
  try {
    lock = acquireLock(dataDir, 'smsdrop (upgrading the journal to read it)');
  } catch (err) {
    if (!(err instanceof LockedError)) throw err;
    const holder = err.holderPid > 0 ? ` (pid ${err.holderPid})` : '';
    throw new SmsdropError(
      'E_JOURNAL_NEEDS_UPGRADE',
      `the journal ${file} was written by an older smsdrop and needs an upgrade, which a reader does not make while another smsdrop process${holder} uses it: upgrade with the daemon stopped (stop it, run this command once, then start the daemon of this version)`,
    );
  }
  try {
    openJournal(file).close();
  } finally {
    lock.release();
  }
}
