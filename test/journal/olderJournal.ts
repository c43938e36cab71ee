// A journal as an older smsdrop left it: the migrations before `version` applied and recorded, as
// that smsdrop ran them, so that a test can write the rows it kept and open it with this one.
import { MIGRATIONS } from '../../src/journal/migrations.js';
import Database from '../../src/journal/sqlite.js';

/** A journal at `file` with the migrations before `version`; the caller writes and closes it. */
export function journalBefore(file: string, version: number): InstanceType<typeof Database> {
  const db = new Database(file);
  db.exec(
    'CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TEXT NOT NULL)',
  );
  for (const m of MIGRATIONS.filter((m) => m.version < version)) {
    db.exec(m.sql);
    db.prepare('INSERT INTO schema_migrations VALUES (?, ?, ?)').run(m.version, m.name, 't');
  }
  return db;
}
