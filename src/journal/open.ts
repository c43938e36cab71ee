// Opens (and creates or upgrades) the journal: one SQLite file per data directory, in WAL mode so
// that readers (reports, the sqlite3 shell) never block the single writer, the program.
import Database, { setSynchronous } from './sqlite.js';
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { connectionOf, Journal } from './connection.js';
import { MIGRATIONS } from './migrations.js';
import { ensureIncrementalVacuum, presetIncrementalVacuum, setSecureDelete } from './storage.js';

export interface OpenJournalOptions {
  /**
   * 'normal' survives any crash of the process; 'full' also survives power loss, at a cost per
   * commit.
   */
  synchronous?: 'normal' | 'full';
  readonly?: boolean;
}

export function openJournal(file: string, options: OpenJournalOptions = {}): Journal {
  if (!options.readonly) mkdirSync(path.dirname(file), { recursive: true });
  const connection = new Database(file, {
    readonly: options.readonly ?? false,
    fileMustExist: options.readonly ?? false,
  });
  const db = new Journal(connection);
  connection.pragma('busy_timeout = 5000');
  if (options.readonly) return db;
  // A new file takes this as its setting only before anything is written to it, WAL mode included.
  presetIncrementalVacuum(db);
  connection.pragma('journal_mode = WAL');
  setSynchronous(connection, options.synchronous ?? 'normal');
  connection.pragma('temp_store = MEMORY');
  // Deleted content is overwritten with zeros, not only marked free: what pruning (and a discarded
  // intake) deletes holds phone numbers. Deletes are rare (nothing else deletes rows), so it costs
  // sending nothing.
  setSecureDelete(db, true);
  // 8 MB of page cache: the OS caches the file too, and a bigger cache only raises peak memory.
  connection.pragma('cache_size = -8000');
  walBound(db);
  // A journal made before is rewritten once (storage.ts).
  ensureIncrementalVacuum(db);
  migrate(db);
  return db;
}

/** Pages of WAL after which a commit checkpoints them into the database (4 KB pages: 16 MB). */
export const WAL_CHECKPOINT_PAGES = 4096;
/** What a WAL grown past the bound (one big commit) is cut back to once it starts over. */
export const WAL_SIZE_LIMIT_BYTES = 16 * 1024 * 1024;

/**
 * Keeps the WAL small: a checkpoint once it holds WAL_CHECKPOINT_PAGES, neither SQLite's 1,000 nor
 * more. Each request's outcome is a commit of a few pages, so a larger bound lets the WAL of a
 * small list grow to a hundred times its size; with 1,000, a checkpoint and its two fsyncs run
 * after nearly every large commit of a list in random order (docs/benchmark-history.md, "A bounded
 * WAL"). Intake commits 50,000 rows at a time (bulk.ts), and a commit's
 * pages all go to the WAL first: the peak is this bound plus the largest commit, and
 * journal_size_limit cuts the file back after it (measures in docs/operations.md). The intents
 * file keeps SQLite's 1,000 pages: its rows are deleted as the journal commits.
 */
function walBound(db: Journal): void {
  const connection = connectionOf(db);
  connection.pragma(`wal_autocheckpoint = ${WAL_CHECKPOINT_PAGES}`);
  connection.pragma(`journal_size_limit = ${WAL_SIZE_LIMIT_BYTES}`);
}

function migrate(db: Journal): void {
  const connection = connectionOf(db);
  connection.exec(
    'CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TEXT NOT NULL)',
  );
  const applied = new Set(
    connection.prepare('SELECT version FROM schema_migrations').pluck().all() as number[],
  );
  const pending = MIGRATIONS.filter((m) => !applied.has(m.version));
  if (pending.length === 0) return;
  // A migration may rebuild a table others refer to (SQLite changes a column's type no other
  // way): dropping the old one must not delete, or check, what refers to it. Outside any
  // transaction, where SQLite takes this pragma.
  connection.pragma('foreign_keys = OFF');
  try {
    for (const migration of pending)
      connection.transaction(() => {
        connection.exec(migration.sql);
        connection
          .prepare('INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)')
          .run(migration.version, migration.name, new Date().toISOString());
      })();
  } finally {
    connection.pragma('foreign_keys = ON');
  }
}
