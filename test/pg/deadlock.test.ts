// Row locks of one node's own writes on the PostgreSQL journal never end a file: a lease renewal
// skips a batch another transaction has locked instead of waiting for it (a wait could close a
// cycle of locks: 40P01), and a turn of the sender's writes PostgreSQL rolls back to break a
// deadlock is tried again.
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { after, describe, test } from 'node:test';
import type pg from 'pg';
import { renewLeases } from '../../src/pgjournal/claims.js';
import { migratePostgres, openPool } from '../../src/pgjournal/schema.js';
import { TurnQueue } from '../../src/pgjournal/writeQueue.js';
import { postgresMissing, usePostgres } from './cluster.js';

const NODE = 'host-a:1';

const SEED = `
  INSERT INTO files (id, sha256, name, size, encoding, status, created_at)
    VALUES (1, 'a', 'a.csv', 1, 'utf-8', 'sending', 't');
  INSERT INTO groups (id, file_id, key_hash, app_id, template_id, datas)
    VALUES (1, 1, 1, 'app', '7', '[]');
  INSERT INTO batches (id, file_id, group_id, req_id, numbers, state, next_attempt_at, created_at, updated_at, lease_node, lease_until)
    SELECT i, 1, 1, 'req' || i, 1, 'planned', 0, 't', 't', '${NODE}', clock_timestamp() + interval '1 minute'
    FROM generate_series(1, 3) i;
`;

/** Resolves with `promise`'s value, or rejects once `ms` pass first. */
function within<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  return Promise.race([
    promise,
    sleep(ms, undefined, { ref: false }).then(() =>
      assert.fail(`${what}: still waiting after ${ms} ms`),
    ),
  ]);
}

describe('row locks of a node own writes', { skip: postgresMissing() }, () => {
  const pg15 = usePostgres();

  async function journal(): Promise<pg.Pool> {
    const pool = openPool(await pg15.cluster.freshDatabase(), 4);
    pool.on('error', () => undefined);
    after(() => pool.end());
    await migratePostgres(pool);
    await pool.query(SEED);
    return pool;
  }

  test('a renewal skips a batch locked by a write, and says it is still held', async () => {
    const pool = await journal();
    const writer = await pool.connect();
    try {
      await writer.query('BEGIN');
      await writer.query('SELECT id FROM batches WHERE id = 2 FOR UPDATE');
      const renewed = await within(
        renewLeases(pool, { node: NODE, ms: 60_000 }),
        5_000,
        'the renewal',
      );
      assert.deepEqual(renewed.held, [1, 3]);
      assert.deepEqual(renewed.busy, [2]);
      await writer.query('COMMIT');
    } finally {
      writer.release();
    }
    assert.deepEqual((await renewLeases(pool, { node: NODE, ms: 60_000 })).held, [1, 2, 3]);
  });

  test("a turn chosen as a deadlock's victim is tried again, and commits", async () => {
    const pool = await journal();
    const queue = new TurnQueue(pool);
    const other = await pool.connect();
    try {
      await other.query('BEGIN');
      // The turn's backend, at the default 1 s, finds the cycle first and is the one rolled back.
      await other.query("SET LOCAL deadlock_timeout = '20s'");
      await other.query("UPDATE batches SET status_msg = 'other' WHERE id = 2");
      let lockedOne: () => void = () => undefined;
      const turnHoldsOne = new Promise<void>((resolve) => (lockedOne = resolve));
      const turn = queue.run(async (db) => {
        await db.query("UPDATE batches SET status_msg = 'turn' WHERE id = 1");
        lockedOne();
        await db.query("UPDATE batches SET status_msg = 'turn' WHERE id = 2");
        return 'written';
      });
      await turnHoldsOne;
      await sleep(100); // the turn now waits for row 2
      await other.query("UPDATE batches SET status_msg = 'other' WHERE id = 1"); // the cycle
      await other.query('COMMIT');
      assert.equal(await within(turn, 30_000, 'the turn'), 'written');
    } finally {
      other.release();
    }
    const { rows } = await pool.query<{ status_msg: string }>(
      'SELECT status_msg FROM batches WHERE id IN (1, 2) ORDER BY id',
    );
    assert.deepEqual(
      rows.map((r) => r.status_msg),
      ['turn', 'turn'],
      'the turn, tried again, wrote last',
    );
  });
});
