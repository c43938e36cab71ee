// The PostgreSQL journal as migrations 1 to 14 leave it, its row's extras an object by name, opened
// by this smsdrop: migrated in place, that row and the rows written since (cells in an array, named
// by the file's header) read in v_recipients as the same object, spelt as the SQLite journal
// spells it (test/journal/extrasCells.test.ts).
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { PG_MIGRATIONS } from '../../src/pgjournal/migrations.js';
import { migratePostgres } from '../../src/pgjournal/schema.js';
import { encodeExtras } from '../../src/journalRules/extras.js';
import { postgresMissing, usePostgres } from './cluster.js';

const HEADER = JSON.stringify({
  columns: ['phone', 'templateId', '客户编号', '2024', 'note'],
  extras: ['客户编号', '2024', 'note'],
});
const OLD_EXTRAS = JSON.stringify({ 客户编号: 'C1', 2024: 'x', note: 'say "hi", \\ ok' });
const LAST_BEFORE = 14;

describe(
  "a row's extras as cells named by its file, on PostgreSQL",
  { skip: postgresMissing() },
  () => {
    const pg15 = usePostgres();

    test('an old journal migrates in place; both forms read as the same object by name', async () => {
      const pool = pg15.cluster.pool(await pg15.cluster.freshDatabase(), 1);
      await pool.query(
        'CREATE TABLE schema_migrations (version integer PRIMARY KEY, name text NOT NULL, applied_at text NOT NULL)',
      );
      for (const m of PG_MIGRATIONS.filter((m) => m.version <= LAST_BEFORE)) {
        await pool.query(m.sql);
        await pool.query('INSERT INTO schema_migrations VALUES ($1, $2, $3)', [
          m.version,
          m.name,
          't',
        ]);
      }
      await pool.query(
        `INSERT INTO files (id, sha256, name, size, encoding, status, header, created_at)
       VALUES (1, 'a', 'list.csv', 1, 'utf8', 'done', $1, 't')`,
        [HEADER],
      );
      const insertRow = `INSERT INTO rows (file_id, line, phone_raw, intake, error, extras)
       VALUES (1, $1, '12345', 'invalid', 'too short', $2)`;
      await pool.query(insertRow, [2, OLD_EXTRAS]);
      const { applied } = await migratePostgres(pool);
      assert.ok(applied.includes(LAST_BEFORE + 1), `applied ${applied.join(', ')}`);
      await pool.query(insertRow, [3, encodeExtras(['C1', 'x', 'say "hi", \\ ok'])]);
      await pool.query(insertRow, [4, encodeExtras(['C3', '', ''])]);
      const shown = await pool.query<{ line: number; extras: string }>(
        'SELECT line, extras FROM v_recipients ORDER BY line',
      );
      assert.deepEqual(
        shown.rows.map((r) => [r.line, JSON.parse(r.extras) as Record<string, string>]),
        [
          [2, JSON.parse(OLD_EXTRAS)],
          [3, JSON.parse(OLD_EXTRAS)],
          [4, { 客户编号: 'C3', 2024: '', note: '' }],
        ],
      );
      // Spelt as SQLite's json_group_object and JSON.stringify spell it, in the header's order.
      assert.equal(
        shown.rows[1]!.extras,
        '{"客户编号":"C1","2024":"x","note":"say \\"hi\\", \\\\ ok"}',
      );
    });
  },
);
