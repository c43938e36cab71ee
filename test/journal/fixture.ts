// A journal in a temporary folder, closed and removed after the test file, holding file 1 and its
// group 1: what tests that write batches by hand stand on.
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after } from 'node:test';
import type { Journal } from '../../src/journal/connection.js';
import { openJournal } from '../../src/journal/open.js';
import { sqliteOf } from './sqliteOf.js';

export function journalWithOneGroup(
  prefix: string,
  file: { status: string; createdAt: string },
): { db: Journal; dir: string } {
  const dir = mkdtempSync(path.join(os.tmpdir(), prefix));
  after(() => rmSync(dir, { recursive: true, force: true }));
  const db = openJournal(path.join(dir, 'journal.sqlite'));
  after(() => db.close());
  sqliteOf(db)
    .prepare(
      "INSERT INTO files (id, sha256, name, size, encoding, status, created_at) VALUES (1, 'x', 'f.csv', 0, 'utf-8', ?, ?)",
    )
    .run(file.status, file.createdAt);
  sqliteOf(db).exec(
    "INSERT INTO groups (id, file_id, key_hash, app_id, template_id, datas) VALUES (1, 1, 0, 'app', '1', '[]')",
  );
  return { db, dir };
}
