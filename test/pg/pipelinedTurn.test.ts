// A send turn's writes on the journal's pool (src/pgjournal/writeQueue.ts, whose connections are
// in pipeline mode: schema.ts, openPool): the writes of one turn go out together, each write's
// next statement once its own answer is in, so a turn costs the round trips of its longest write,
// not the sum of them; and a failure anywhere still rolls every write of the turn back, a
// statement sent after the failure included, each caller hearing the failure itself. A turn of
// one-statement writes (the attempts) sends its COMMIT right behind them: one round trip.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type pg from 'pg';
import { SmsdropError } from '../../src/errors.js';
import { openPool } from '../../src/pgjournal/schema.js';
import { TurnQueue } from '../../src/pgjournal/writeQueue.js';
import { postgresMissing, usePostgres } from './cluster.js';

/** A write of two statements, each logging `name` and its step in the order the server ran it. */
function twoSteps(name: string) {
  return async (db: pg.PoolClient): Promise<string> => {
    await db.query('INSERT INTO log (what) VALUES ($1)', [`${name}1`]);
    await db.query('INSERT INTO log (what) VALUES ($1)', [`${name}2`]);
    return name;
  };
}

describe("a send turn's writes on the PostgreSQL journal", { skip: postgresMissing() }, () => {
  const pg15 = usePostgres();

  async function journalPool(): Promise<pg.Pool> {
    const pool = openPool(await pg15.cluster.freshDatabase(), 2);
    await pool.query('CREATE TABLE log (seq serial PRIMARY KEY, what text NOT NULL)');
    return pool;
  }

  const logged = async (pool: pg.Pool): Promise<string[]> =>
    (await pool.query<{ what: string }>('SELECT what FROM log ORDER BY seq')).rows.map(
      (r) => r.what,
    );

  test('go out together: every first statement before any second, in one transaction', async () => {
    const pool = await journalPool();
    try {
      const queue = new TurnQueue(pool);
      const done = await Promise.all(['a', 'b', 'c'].map((name) => queue.run(twoSteps(name))));
      assert.deepEqual(done, ['a', 'b', 'c']);
      assert.deepEqual(await logged(pool), ['a1', 'b1', 'c1', 'a2', 'b2', 'c2']);
      const { rows } = await pool.query<{ n: number }>(
        'SELECT count(DISTINCT xmin::text)::int AS n FROM log',
      );
      assert.equal(rows[0]?.n, 1, 'one transaction wrote them all');
    } finally {
      await pool.end();
    }
  });

  test('a failing write rolls the whole turn back, statements sent after it included', async () => {
    const pool = await journalPool();
    try {
      const queue = new TurnQueue(pool);
      const turn = [
        queue.run(twoSteps('a')),
        queue.run((db) => db.query('SELECT 1 / 0')),
        queue.run(twoSteps('c')),
      ];
      for (const write of turn) await assert.rejects(write, /division by zero/);
      assert.deepEqual(await logged(pool), [], 'nothing of the turn committed');
      await queue.run(twoSteps('d'));
      assert.deepEqual(await logged(pool), ['d1', 'd2'], 'the connection serves the next turn');
    } finally {
      await pool.end();
    }
  });

  test('a write refused before it wrote fails alone; the others commit', async () => {
    const pool = await journalPool();
    try {
      const queue = new TurnQueue(pool);
      const refusal = new SmsdropError('E_BATCH_TRANSITION', 'batch 7 is another node’s');
      const turn = [
        queue.run(twoSteps('a')),
        queue.run(async (db) => {
          await db.query('SELECT 1');
          throw refusal;
        }),
        queue.run(twoSteps('c')),
      ];
      assert.equal(await turn[0], 'a');
      await assert.rejects(turn[1]!, (error) => error === refusal);
      assert.equal(await turn[2], 'c');
      assert.deepEqual(await logged(pool), ['a1', 'c1', 'a2', 'c2']);
    } finally {
      await pool.end();
    }
  });

  /** A one-statement write: logs `name`, then reads whether it is still in a transaction. */
  function logThenLook(name: string, look = 'SELECT pg_current_xact_id_if_assigned() AS xid') {
    return async (db: pg.PoolClient): Promise<unknown> => {
      await db.query('INSERT INTO log (what) VALUES ($1)', [name]);
      return (await db.query<{ xid: unknown }>(look)).rows[0]?.xid;
    };
  }

  test('of one statement each are committed with them: a read after them is outside', async () => {
    const pool = await journalPool();
    try {
      const queue = new TurnQueue(pool);
      const looks = await Promise.all(
        ['a', 'b'].map((name) => queue.run(logThenLook(name), { oneStatement: true })),
      );
      assert.deepEqual(looks, [null, null], 'COMMIT went before the reads: no transaction');
      const inside = await queue.run(logThenLook('c'));
      assert.notEqual(inside, null, 'a turn of other writes commits after them');
      const { rows } = await pool.query<{ n: number }>(
        "SELECT count(DISTINCT xmin::text)::int AS n FROM log WHERE what IN ('a', 'b')",
      );
      assert.equal(rows[0]?.n, 1, 'one transaction wrote a and b');
    } finally {
      await pool.end();
    }
  });

  test('of one statement each: one failing rolls them all back; a read failing after, alone', async () => {
    const pool = await journalPool();
    try {
      const queue = new TurnQueue(pool);
      const failing = [
        queue.run(logThenLook('a'), { oneStatement: true }),
        queue.run((db) => db.query('SELECT 1 / 0'), { oneStatement: true }),
      ];
      for (const write of failing) await assert.rejects(write, /division by zero/);
      assert.deepEqual(await logged(pool), []);
      const lateRead = [
        queue.run(logThenLook('b', 'SELECT 1 / 0 AS xid'), { oneStatement: true }),
        queue.run(logThenLook('c'), { oneStatement: true }),
      ];
      await assert.rejects(lateRead[0]!, /division by zero/);
      assert.equal(await lateRead[1], null);
      assert.deepEqual(await logged(pool), ['b', 'c'], 'committed before the read failed');
    } finally {
      await pool.end();
    }
  });
});
