// The journal pool's connections (src/pgjournal/journalClient.ts): a new connection is set up (no
// parallel query) before the statement it was taken for, with no statement queued behind another
// (node-postgres warns of that, once a process: "Calling client.query() when the client is
// already executing a query"); four are kept open while they idle; and a statement with
// parameters is prepared once on a connection, then run by its name.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { setTimeout as sleep, setImmediate as tick } from 'node:timers/promises';
import { statementName } from '../../src/pgjournal/journalClient.js';
import { openPool } from '../../src/pgjournal/schema.js';
import { postgresMissing, usePostgres } from './cluster.js';

describe("the PostgreSQL journal's connections", { skip: postgresMissing() }, () => {
  const pg15 = usePostgres();

  test('are set up before their first statement, with no warning', async () => {
    const warnings: string[] = [];
    const heard = (warning: Error) => warnings.push(warning.message);
    process.on('warning', heard);
    const pool = openPool(await pg15.cluster.freshDatabase(), 3);
    try {
      const asks = Array.from({ length: 6 }, () =>
        pool.query<{ v: string }>('SELECT current_setting($1) AS v', [
          'max_parallel_workers_per_gather',
        ]),
      );
      for (const { rows } of await Promise.all(asks)) assert.equal(rows[0]?.v, '0');
      assert.equal(pool.totalCount, 3, 'three new connections, each asked at once');
      await tick();
      assert.deepEqual(warnings, []);
    } finally {
      process.off('warning', heard);
      await pool.end();
    }
  });

  test('four are kept open however long they idle, the others closed', async () => {
    const pool = openPool(await pg15.cluster.freshDatabase(), 6, { idleTimeoutMillis: 100 });
    try {
      await Promise.all(Array.from({ length: 6 }, () => pool.query('SELECT pg_sleep(0.05)')));
      assert.equal(pool.totalCount, 6, 'six at once');
      // the idle timers (100 ms) may fire late on a loaded machine: wait for them, then a while
      for (let waited = 0; pool.totalCount > 4 && waited < 20_000; waited += 50) await sleep(50);
      await sleep(500);
      assert.equal(pool.totalCount, 4);
      assert.equal(pool.idleCount, 4);
    } finally {
      await pool.end();
    }
  });

  test('prepare a statement once, then run it by name', async () => {
    const pool = openPool(await pg15.cluster.freshDatabase(), 1);
    const text = 'SELECT $1::int + 1 AS n';
    const asArrays = 'SELECT $1::int + 2 AS n';
    try {
      for (const n of [1, 2, 3]) {
        const { rows } = await pool.query<{ n: number }>(text, [n]);
        assert.equal(rows[0]?.n, n + 1);
        const arrays = await pool.query({ text: asArrays, values: [n], rowMode: 'array' });
        assert.deepEqual(arrays.rows, [[n + 2]]);
      }
      const { rows } = await pool.query<{ name: string; runs: number }>(
        `SELECT name, generic_plans + custom_plans AS runs FROM pg_prepared_statements
         WHERE statement = ANY($1) ORDER BY statement`,
        [[text, asArrays]],
      );
      assert.deepEqual(rows, [
        { name: statementName(text), runs: 3 },
        { name: statementName(asArrays), runs: 3 },
      ]);
    } finally {
      await pool.end();
    }
  });
});
