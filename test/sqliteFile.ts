// A data directory's SQLite journal read with plain SQL on its file, as the sqlite3 shell reads it
// (docs/operations.md, "Straight from SQLite"): the documented views, or a table a test checks
// beside them. A test that sets a scene no command makes (a file taken days ago, a write the
// disk refuses) writes the file the same way. No code of the journal's runs here but the build of
// better-sqlite3 that loads on this Node (src/journal/sqlite.ts): every other way in is
// src/journals/, and a test of the journal's own modules belongs in test/journal/.
import { mkdirSync } from 'node:fs';
import type BetterSqlite3 from 'better-sqlite3';
import Database from '../src/journal/sqlite.js';
import { SQLITE_DIALECT } from '../src/journal/rules.js';
import { journalPath, openWriter } from '../src/journals/index.js';

export type SqliteFile = BetterSqlite3.Database;

/** The journal file of dataDir, which smsdrop made: read-only unless `write`. Close it after. */
export function openSqliteFile(dataDir: string, options: { write?: boolean } = {}): SqliteFile {
  return new Database(journalPath(dataDir), {
    readonly: !options.write,
    fileMustExist: true,
  });
}

/** The journal file of dataDir given to `use`, closed after. */
export function withSqliteFile<T>(
  dataDir: string,
  use: (db: SqliteFile) => T,
  options: { write?: boolean } = {},
): T {
  const db = openSqliteFile(dataDir, options);
  try {
    return use(db);
  } finally {
    db.close();
  }
}

/** A fresh journal in dataDir, made as `smsdrop send` makes it, then closed. */
export async function makeJournal(dataDir: string): Promise<void> {
  mkdirSync(dataDir, { recursive: true });
  const { handle } = await openWriter(
    { dataDir },
    {
      role: 'a test making the journal',
      synchronous: 'normal',
      reqIdOn: false,
      onLost: () => {
        throw new Error('the journal lost requests’ records');
      },
    },
  );
  await handle.close();
}

/**
 * The SQL of a `?` parameter holding an ISO 8601 time, as SQLite's journal stores the times of
 * attempts and batches (milliseconds): for tests that write those columns by hand.
 */
export const STORED_TIME_PARAM = SQLITE_DIALECT.storedTime('?');
