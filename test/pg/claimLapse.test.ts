// A node whose claim on a file passed stops reading it: its intake's next commit checks, in the
// same transaction, that the file is still this node's (file_readers) and that the claim has not
// passed by the database's clock; refused, the commit is rolled back, nothing of it is seen, and
// the intake fails with E_FILE_CLAIM_LOST (the copy then waits, as 'elsewhere'; never refused).
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, describe, test } from 'node:test';
import type pg from 'pg';
import { hasCode } from '../../src/errors.js';
import { pgFileStore } from '../../src/pgjournal/files.js';
import { migratePostgres, openPool } from '../../src/pgjournal/schema.js';
import { postgresMissing, usePostgres } from './cluster.js';
import { intakeFile, writeCsv } from './intakeRun.js';

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'smsdrop-pg-lapse-'));
after(() => fs.rmSync(dir, { recursive: true, force: true }));

const LEASE_MS = 60_000;

describe('a node whose claim on a file lapsed', { skip: postgresMissing() }, () => {
  const pg15 = usePostgres();

  async function journal(): Promise<pg.Pool> {
    const pool = openPool(await pg15.cluster.freshDatabase(), 4);
    pool.on('error', () => undefined);
    after(() => pool.end());
    await migratePostgres(pool);
    return pool;
  }

  async function rowsSeen(pool: pg.Pool): Promise<number> {
    const { rows } = await pool.query<{ n: number }>('SELECT count(*)::int AS n FROM rows');
    return rows[0]!.n;
  }

  /**
   * Node A reads a file of 12,000 rows (commits at 5,000, then at the end); once its first commit
   * is seen, `lapse` runs; returns what the intake threw and the rows seen before and after.
   */
  async function readWhileLapsing(pool: pg.Pool, lapse: (fileId: number) => Promise<void>) {
    const csv = path.join(dir, `lapse-${Math.random().toString(36).slice(2)}.csv`);
    writeCsv(csv, 12_000);
    const a = pgFileStore(pool, { reader: { node: 'node-a', leaseMs: LEASE_MS } });
    let before: number | undefined;
    const error = await intakeFile(csv, {
      files: a,
      afterChunk: async () => {
        if (before !== undefined) return;
        const seen = await rowsSeen(pool);
        if (seen === 0) return;
        before = seen;
        const { rows } = await pool.query<{ id: number }>('SELECT id FROM files');
        await lapse(rows[0]!.id);
      },
    }).then(
      () => undefined,
      (err: unknown) => err,
    );
    assert.ok(before !== undefined && before > 0, 'a first commit was seen');
    return { error, before, afterwards: await rowsSeen(pool) };
  }

  test('taken over by another node, its next commit is refused and nothing of it is seen', async () => {
    const pool = await journal();
    const { error, before, afterwards } = await readWhileLapsing(pool, async (id) => {
      await pool.query("UPDATE file_readers SET node = 'node-b' WHERE file_id = $1", [id]);
    });
    assert.ok(hasCode(error, 'E_FILE_CLAIM_LOST'), `refused: ${String(error)}`);
    assert.match((error as Error).message, /node node-b took it over/);
    assert.equal(afterwards, before, 'the refused commit wrote nothing');
    const { rows } = await pool.query<{ node: string }>('SELECT node FROM file_readers');
    assert.deepEqual(rows, [{ node: 'node-b' }], "the other node's claim stands");
  });

  test('its claim passed by the database clock (nobody took it yet): refused as well', async () => {
    const pool = await journal();
    const { error, before, afterwards } = await readWhileLapsing(pool, async (id) => {
      await pool.query(
        "UPDATE file_readers SET until = clock_timestamp() - interval '1 second' WHERE file_id = $1",
        [id],
      );
    });
    assert.ok(hasCode(error, 'E_FILE_CLAIM_LOST'), `refused: ${String(error)}`);
    assert.match((error as Error).message, /its claim on it passed/);
    assert.equal(afterwards, before);
  });

  test('a claim held to the end: every row committed, and each commit renews it', async () => {
    const pool = await journal();
    const { error, before, afterwards } = await readWhileLapsing(pool, async (id) => {
      // Close to passing, but not passed: the next commit renews it for a whole lease.
      await pool.query(
        "UPDATE file_readers SET until = clock_timestamp() + interval '5 seconds' WHERE file_id = $1",
        [id],
      );
    });
    assert.equal(error, undefined);
    assert.ok(afterwards > before);
    const { rows } = await pool.query<{ left: number }>(
      'SELECT extract(epoch FROM until - clock_timestamp())::float8 AS left FROM file_readers',
    );
    assert.ok(rows[0]!.left > 30, `renewed by the commit (${rows[0]!.left} s left)`);
  });

  test('taken over, it cannot move the file either: not sending, not done, not refused', async () => {
    const pool = await journal();
    const { before } = await readWhileLapsing(pool, async (id) => {
      await pool.query("UPDATE file_readers SET node = 'node-b' WHERE file_id = $1", [id]);
    });
    const a = pgFileStore(pool, { reader: { node: 'node-a', leaseMs: LEASE_MS } });
    const { rows } = await pool.query<{ id: number }>('SELECT id FROM files');
    const id = rows[0]!.id;
    const refused = (error: unknown) => hasCode(error, 'E_FILE_CLAIM_LOST');
    await assert.rejects(a.status(id, 'sending'), refused);
    await assert.rejects(a.status(id, 'done'), refused);
    await assert.rejects(
      a.refuse(id, () => 'E_FILE_CSV: a broken quote'),
      refused,
    );
    await assert.rejects(async () => a.beginIntake(id), refused);
    const file = await pool.query<{ status: string }>('SELECT status FROM files');
    assert.equal(file.rows[0]!.status, 'intake');
    assert.equal(await rowsSeen(pool), before, "none of node B's rows deleted");

    await pool.query('DELETE FROM file_readers'); // nobody reads it (retry and resume claim none)
    await a.status(id, 'sending');
  });
});
