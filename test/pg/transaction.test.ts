// The PostgreSQL journal's one transaction helper (src/pgjournal/smallTransaction.ts) and the two
// users whose release of a client differed from it: a failed work rolls back and its client goes
// back to the pool; a client whose connection the server ended mid-transaction is closed, never
// lent again, and the pool goes on with a fresh one. The pools here are plain pg pools, whose
// clients nobody else listens to: the helper alone must keep a broken connection's 'error' event
// from ending the process.
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { describe, test } from 'node:test';
import type pg from 'pg';
import { SmsdropError } from '../../src/errors.js';
import { withTransaction } from '../../src/pgjournal/smallTransaction.js';
import { IntakeTransaction } from '../../src/pgjournal/bulk.js';
import { TurnQueue } from '../../src/pgjournal/writeQueue.js';
import { postgresMissing, usePostgres } from './cluster.js';

async function backendPid(db: pg.ClientBase | pg.Pool): Promise<number> {
  const { rows } = await db.query<{ pid: number }>('SELECT pg_backend_pid() AS pid');
  return rows[0]!.pid;
}

describe('the PostgreSQL transaction helper', { skip: postgresMissing() }, () => {
  const pg15 = usePostgres();

  async function pools(): Promise<{ pool: pg.Pool; admin: pg.Pool }> {
    const url = await pg15.cluster.freshDatabase();
    const admin = pg15.cluster.pool(url, 1);
    await admin.query('CREATE TABLE t (n integer)');
    return { pool: pg15.cluster.pool(url, 2), admin };
  }

  /** Ends `db`'s server process from another connection, and waits until it is gone. */
  async function killBackendOf(db: pg.ClientBase, admin: pg.Pool): Promise<void> {
    const pid = await backendPid(db);
    const { rows } = await admin.query<{ done: boolean }>(
      'SELECT pg_terminate_backend($1, 60000) AS done',
      [pid],
    );
    assert.equal(rows[0]!.done, true);
  }

  test('a failing work rolls back, its error is thrown on, its client goes back to the pool', async () => {
    const { pool, admin } = await pools();
    const refused = new Error('refused');
    let used = 0;
    await assert.rejects(
      withTransaction(pool, async (client) => {
        used = await backendPid(client);
        await client.query('INSERT INTO t VALUES (1)');
        throw refused;
      }),
      (error) => error === refused,
    );
    assert.equal((await admin.query('SELECT * FROM t')).rowCount, 0);
    assert.equal(pool.totalCount, 1);
    assert.equal(pool.idleCount, 1);
    const next = await withTransaction(pool, async (client) => {
      await client.query('INSERT INTO t VALUES (2)');
      return backendPid(client);
    });
    assert.equal(next, used, 'the same connection, lent again');
    assert.deepEqual((await admin.query('SELECT n FROM t')).rows, [{ n: 2 }]);
  });

  test('a connection ended mid-transaction is closed, not lent again; the next work gets a fresh one', async () => {
    const { pool, admin } = await pools();
    let killed = 0;
    await assert.rejects(
      withTransaction(pool, async (client) => {
        killed = await backendPid(client);
        await client.query('INSERT INTO t VALUES (1)');
        await killBackendOf(client, admin);
        await client.query('INSERT INTO t VALUES (2)');
      }),
      /terminat|not queryable/i,
    );
    assert.equal(pool.totalCount, 0, 'the broken client left the pool');
    const fresh = await withTransaction(pool, async (client) => {
      await client.query('INSERT INTO t VALUES (3)');
      return backendPid(client);
    });
    assert.notEqual(fresh, killed);
    assert.deepEqual((await admin.query('SELECT n FROM t')).rows, [{ n: 3 }]);
  });

  test('a send turn whose write fails rolls back and gives its healthy client back to the pool', async () => {
    const { pool, admin } = await pools();
    const turns = new TurnQueue(pool);
    const used = await turns.run((client) => backendPid(client));
    const broken = turns.run(async (client) => {
      await client.query('INSERT INTO t VALUES (1)');
      await client.query('SELECT 1 / 0');
    });
    await assert.rejects(broken, /division by zero/);
    assert.equal(await turns.run((client) => backendPid(client)), used);
    assert.equal(pool.totalCount, 1);
    assert.equal((await admin.query('SELECT * FROM t')).rowCount, 0);
  });

  test("the plan store's transaction held across steps: a connection ended in a step is closed", async () => {
    const { pool, admin } = await pools();
    const intake = new IntakeTransaction(pool, 7);
    let first = 0;
    await intake.run(async (db) => {
      first = await backendPid(db);
      await db.query('INSERT INTO t VALUES (1)');
    });
    await intake.run(async () => {
      assert.equal(await intake.commitOpen(), true);
    });
    const removed = once(pool, 'remove');
    await assert.rejects(
      intake.run(async (db) => {
        assert.equal(await backendPid(db), first, 'the committed client was lent again');
        await db.query('INSERT INTO t VALUES (2)');
        await killBackendOf(db, admin);
        await db.query('INSERT INTO t VALUES (3)');
      }),
      (error) => error instanceof SmsdropError && error.code === 'E_JOURNAL_WRITE',
    );
    assert.equal(intake.lost, true);
    await removed;
    assert.equal(pool.totalCount, 0);
    assert.notEqual(await backendPid(pool), first);
    assert.deepEqual((await admin.query('SELECT n FROM t')).rows, [{ n: 1 }]);
  });
});
