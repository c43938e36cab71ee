// A journal whose rows hold their extras as objects by name (as intake wrote them up to migration
// 16), opened by this smsdrop: migrated in place, its old rows and the rows written since (cells
// in an array, named by the file's header) read the same in v_recipients and in a rejected file.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, describe, it } from 'node:test';
import { openJournal } from '../../src/journal/open.js';
import { MIGRATIONS } from '../../src/journal/migrations.js';
import { encodeExtras, extrasByName } from '../../src/journalRules/extras.js';
import { journalBefore } from './olderJournal.js';
import { sqliteOf } from './sqliteOf.js';

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'smsdrop-extras-cells-'));
after(() => fs.rmSync(dir, { recursive: true, force: true }));

const HEADER = JSON.stringify({
  columns: ['phone', 'templateId', '客户编号', '2024', 'note'],
  extras: ['客户编号', '2024', 'note'],
});
const OLD_EXTRAS = JSON.stringify({ 客户编号: 'C1', 2024: 'x', note: 'say "hi", \\ ok' });

/** A journal as migrations 1 to 16 leave it, with one file whose row holds an object. */
function journalAtMigration16(file: string): void {
  const db = journalBefore(file, 17);
  db.prepare(
    `INSERT INTO files (id, sha256, name, size, encoding, status, header, created_at)
     VALUES (1, 'a', 'list.csv', 1, 'utf8', 'done', ?, 't')`,
  ).run(HEADER);
  db.prepare(
    `INSERT INTO rows (file_id, line, phone_raw, intake, error, extras)
     VALUES (1, 2, '12345', 'invalid', 'too short', ?)`,
  ).run(OLD_EXTRAS);
  db.close();
}

describe("a row's extras as cells named by its file", () => {
  it('an old journal migrates in place; both forms read as the same object by name', () => {
    const file = path.join(dir, 'journal.sqlite');
    journalAtMigration16(file);
    const journal = openJournal(file);
    try {
      const db = sqliteOf(journal);
      assert.equal(
        db.prepare('SELECT max(version) FROM schema_migrations').pluck().get(),
        MIGRATIONS.at(-1)!.version,
      );
      const cells = encodeExtras(['C1', 'x', 'say "hi", \\ ok']);
      assert.equal(cells, '["C1","x","say \\"hi\\", \\\\ ok"]');
      db.prepare(
        `INSERT INTO rows (file_id, line, phone_raw, intake, error, extras)
         VALUES (1, 3, '12346', 'invalid', 'too short', ?), (1, 4, '12347', 'invalid', 'too short', ?)`,
      ).run(cells, encodeExtras(['C3', '', '']));
      const shown = db
        .prepare('SELECT line, extras FROM v_recipients ORDER BY line')
        .all() as Array<{ line: number; extras: string }>;
      assert.deepEqual(
        shown.map((r) => [r.line, JSON.parse(r.extras) as Record<string, string>]),
        [
          [2, JSON.parse(OLD_EXTRAS)],
          [3, JSON.parse(OLD_EXTRAS)],
          [4, { 客户编号: 'C3', 2024: '', note: '' }],
        ],
      );
      // Spelt as JSON.stringify spells it, the names in the header's order.
      assert.equal(shown[1]!.extras, '{"客户编号":"C1","2024":"x","note":"say \\"hi\\", \\\\ ok"}');
      const names = (JSON.parse(HEADER) as { extras: string[] }).extras;
      const stored = db.prepare('SELECT extras FROM rows ORDER BY line').pluck().all() as string[];
      assert.deepEqual(
        stored.map((s) => extrasByName(s, names)),
        shown.map((r) => JSON.parse(r.extras) as Record<string, string>),
      );
    } finally {
      journal.close();
    }
  });

  it('a file without extra columns stores none', () => {
    assert.equal(encodeExtras([]), null);
    assert.deepEqual(extrasByName(null, ['note']), {});
  });
});
