// How the PostgreSQL journal plans a page of a file's result rows (src/pgjournal/resultRows.ts,
// RESULT_PAGE), on a journal whose statistics do not know the file yet (being read, its rows not
// analysed): the page must seek the file and its id range (rows_by_file on file and id), not read
// all the file's rows and sort them; and the journal's connections plan no parallel query
// (src/pgjournal/journalClient.ts, NO_PARALLEL_QUERY), even where the planner is told workers cost
// nothing (a plain connection then plans the same page in parallel: checked first, the premise).
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import pg from 'pg';
import { RESULT_PAGE } from '../../src/pgjournal/resultRows.js';
import { migratePostgres, openPool } from '../../src/pgjournal/schema.js';
import { postgresMissing, usePostgres } from './cluster.js';

/** `rows` personalised rows of file `file` from id `from`: each its own group and batch, sent. */
function fill(file: number, from: number, rows: number): string[] {
  const ids = `generate_series(${from}, ${from + rows - 1}) i`;
  return [
    `INSERT INTO files (id, sha256, name, size, encoding, status, created_at)
     VALUES (${file}, 'h${file}', 'f${file}.csv', 1, 'utf-8', 'done', 'x')`,
    `INSERT INTO groups (id, file_id, key_hash, app_id, template_id, datas)
     SELECT i, ${file}, i, 'app', '1', '["' || i || '"]' FROM ${ids}`,
    `INSERT INTO batches (id, file_id, group_id, req_id, numbers, state, created_at, updated_at)
     SELECT i, ${file}, i, 'r' || i, 1, 'accepted', 'x', 'x' FROM ${ids}`,
    `INSERT INTO rows (id, file_id, line, phone_raw, phone, group_id, intake, batch_id)
     SELECT i, ${file}, i + 1, 'p', (13000000000 + i)::text, i, 'valid', i FROM ${ids}`,
  ];
}

/** The planner told that parallel workers cost nothing and any table is worth them. */
const PARALLEL_FREE = [
  'SET parallel_setup_cost = 0',
  'SET parallel_tuple_cost = 0',
  'SET min_parallel_table_scan_size = 0',
  'SET min_parallel_index_scan_size = 0',
];

async function pagePlan(db: pg.ClientBase | pg.Pool, file: number, from: number, to: number) {
  const { rows } = await db.query<{ 'QUERY PLAN': string }>(`EXPLAIN ${RESULT_PAGE}`, [
    file,
    from,
    to,
    1000,
  ]);
  return rows.map((r) => r['QUERY PLAN']).join('\n');
}

describe('a page of a result file on PostgreSQL', { skip: postgresMissing() }, () => {
  const pg15 = usePostgres();

  test("seeks the file's id range, when the statistics do not know the file yet", async () => {
    const pool = openPool(await pg15.cluster.freshDatabase(), 2);
    try {
      await migratePostgres(pool);
      for (const statement of fill(1, 1, 50_000)) await pool.query(statement);
      await pool.query('ANALYZE');
      for (const statement of fill(2, 50_001, 20_000)) await pool.query(statement);
      const plan = await pagePlan(pool, 2, 60_000, 70_000);
      assert.match(plan, /Index Cond: \(\(file_id = '2'::bigint\) AND \(id > /, plan);
      assert.doesNotMatch(plan, /Sort/, plan);
      const { rows } = await pool.query<{ id: number }>(RESULT_PAGE, [2, 60_000, 70_000, 1000]);
      assert.equal(rows.length, 1000);
      assert.equal(rows[0]?.id, 60_001);
    } finally {
      await pool.end();
    }
  });

  test('is planned without parallel workers on the journal’s connections', async () => {
    const url = await pg15.cluster.freshDatabase();
    const pool = openPool(url, 2);
    const plain = new pg.Client({ connectionString: url });
    try {
      await migratePostgres(pool);
      for (const statement of fill(1, 1, 20_000)) await pool.query(statement);
      await pool.query('ANALYZE');
      await plain.connect();
      for (const statement of PARALLEL_FREE) await plain.query(statement);
      assert.match(await pagePlan(plain, 1, 0, 20_000), /Gather/, 'a plain connection: parallel');
      const client = await pool.connect();
      try {
        for (const statement of PARALLEL_FREE) await client.query(statement);
        const plan = await pagePlan(client, 1, 0, 20_000);
        assert.doesNotMatch(plan, /Gather|Parallel/, plan);
      } finally {
        client.release();
      }
    } finally {
      await plain.end();
      await pool.end();
    }
  });
});
