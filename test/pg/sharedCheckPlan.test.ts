// The follower's check before each commit (src/pgjournal/intakeTurn.ts, SHARED_WITH_AN_INTAKE) on a
// journal whose statistics say a group has a couple of rows while one message another file is
// reading has 30,000 numbers: each of the file's numbers must be sought in that group by group and
// number, not the group's every number compared with each of the file's rows.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { migratePostgres, openPool } from '../../src/pgjournal/schema.js';
import { SHARED_WITH_AN_INTAKE } from '../../src/pgjournal/intakeTurn.js';
import { postgresMissing, usePostgres } from './cluster.js';

/** 20 files sent, one being read (21) with a 30,000-number group, the follower's file (22). */
const FILL = [
  `INSERT INTO files (id, sha256, name, size, encoding, status, created_at)
   SELECT i, 'h' || i, 'f' || i, 1, 'utf-8', CASE WHEN i > 20 THEN 'intake' ELSE 'done' END, 'x'
   FROM generate_series(1, 22) i`,
  `INSERT INTO groups (id, file_id, key_hash, app_id, template_id, datas)
   SELECT g, 1 + g % 21, hashtext(g::text), 'app', '1', '["' || g || '"]'
   FROM generate_series(1, 100000) g`,
  `INSERT INTO rows (id, file_id, line, phone_raw, phone, group_id, intake, batch_id)
   SELECT r, 1 + (r % 100000) % 21, r, 'p', (13000000000 + r * 7)::text, 1 + r % 100000, 'valid', r
   FROM generate_series(1, 200000) r`,
  `INSERT INTO groups (id, file_id, key_hash, app_id, template_id, datas) VALUES
   (200001, 21, 77, 'app', '1', '["shared"]'), (200002, 22, 77, 'app', '1', '["shared"]')`,
  `INSERT INTO rows (id, file_id, line, phone_raw, phone, group_id, intake, batch_id)
   SELECT 300000 + r, 21, r, 'p', (15000000000 + r * 7)::text, 200001, 'valid', 300000 + r
   FROM generate_series(1, 30000) r`,
  `INSERT INTO rows (id, file_id, line, phone_raw, phone, group_id, intake, batch_id)
   SELECT 400000 + r, 22, r, 'p', (16000000000 + r)::text, 200002, 'valid', 400000 + r
   FROM generate_series(1, 3000) r`,
  'ANALYZE',
];

describe("the follower's check for rows another intake holds", { skip: postgresMissing() }, () => {
  const pg15 = usePostgres();

  test('seeks each number in the other files’ groups of its message by group and number', async () => {
    const pool = openPool(await pg15.cluster.freshDatabase(), 2);
    try {
      await migratePostgres(pool);
      for (const statement of FILL) await pool.query(statement);
      const { rows } = await pool.query<{ 'QUERY PLAN': string }>(
        `EXPLAIN ${SHARED_WITH_AN_INTAKE}`,
        [22],
      );
      const plan = rows.map((r) => r['QUERY PLAN']).join('\n');
      assert.match(plan, /Index Cond: \(\(group_id = og\.id\) AND \(phone = mine\.phone\)\)/, plan);
      assert.doesNotMatch(plan, /Seq Scan on rows\b/, plan);
      const { rows: answer } = await pool.query<{ shared: boolean }>(SHARED_WITH_AN_INTAKE, [22]);
      assert.equal(answer[0]!.shared, false);
      await pool.query(`UPDATE rows SET phone = '15000000007' WHERE id = 400001`);
      const { rows: again } = await pool.query<{ shared: boolean }>(SHARED_WITH_AN_INTAKE, [22]);
      assert.equal(again[0]!.shared, true, 'a number of the shared group is found');
    } finally {
      await pool.end();
    }
  });
});
