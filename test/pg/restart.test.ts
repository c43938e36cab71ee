// The journal's PostgreSQL server crashes and restarts while a daemon sends a file: the file is
// not failed for it. It waits in processing/, goes on once the server answers, lands in done/,
// and every number is sent once. And what counts as the database gone, by code.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { after, describe, test } from 'node:test';
import { isDatabaseOutage, SmsdropError } from '../../src/errors.js';
import {
  assertEachOnce,
  contactsCsv,
  daemonEnv,
  listDir,
  numbersOf,
  startDaemon,
  startProcess,
  startSimulatorProcess,
  tempDir,
  waitUntil,
} from '../daemon/helpers.js';
import { migratePostgres, openPool } from '../../src/pgjournal/schema.js';
import { postgresMissing, usePostgres } from './cluster.js';

test('the database gone is told apart by code, through causes', () => {
  const coded = (code: string, message = 'x') => Object.assign(new Error(message), { code });
  for (const gone of ['ECONNREFUSED', 'ECONNRESET', '57P01', '57P03', '08006', '40P01'])
    assert.ok(isDatabaseOutage(coded(gone)), gone);
  assert.ok(isDatabaseOutage(new Error('Connection terminated unexpectedly')));
  assert.ok(
    isDatabaseOutage(new SmsdropError('E_JOURNAL_WRITE', 'lost', { cause: coded('57P01') })),
  );
  for (const other of ['SQLITE_FULL', '23505', 'E_FILE_QUOTE', 'ENOENT'])
    assert.equal(isDatabaseOutage(coded(other)), false, other);
  assert.equal(isDatabaseOutage(undefined), false);
});

describe('a PostgreSQL restart under a sending daemon', { skip: postgresMissing() }, () => {
  const pg15 = usePostgres();
  const dir = tempDir('pg-restart');
  after(() => fs.rmSync(dir, { recursive: true, force: true }));

  test('a connection held when the server crashes ends no process', async () => {
    const pool = openPool(await pg15.cluster.freshDatabase(), 2);
    after(() => pool.end().catch(() => undefined));
    const held = await pool.connect();
    await pg15.cluster.restart();
    await sleep(300); // the server's end of the connection reaches the client
    await assert.rejects(held.query('SELECT 1'));
    held.release(true);
    const { rows } = await pool.query<{ one: number }>('SELECT 1 AS one');
    assert.deepEqual(rows, [{ one: 1 }], 'a new connection once it is back');
  });

  test('a daemon started while the server is down waits for it, and runs', async () => {
    const url = await pg15.cluster.freshDatabase();
    const restarting = pg15.cluster.restart(3_000);
    await sleep(500); // down now
    const daemon = await startDaemon({
      dataDir: path.join(dir, 'waiting'),
      env: { SMSDROP_DATABASE_URL: url, SMSDROP_LEASE: '3s' },
    });
    after(async () => {
      daemon.kill('SIGKILL');
      await daemon.exited;
    });
    await restarting;
    assert.match(daemon.output(), /watching .*inbox/);
    // It waited (a warning, and /healthz said 503 meanwhile): no error, still running.
    assert.doesNotMatch(daemon.output(), /Z error /);
    assert.equal(daemon.child.exitCode, null, 'the daemon is still running');
  });

  test('a daemon whose opening the server cut off part way tries it again, and runs', async () => {
    const url = await pg15.cluster.freshDatabase();
    const pool = openPool(url, 2);
    await migratePostgres(pool);
    // The daemon's opening stops at the account's slots (past the first connection and the
    // migrations) until the server goes down under it.
    const blocker = await pool.connect();
    await blocker.query('BEGIN');
    await blocker.query('LOCK TABLE account_slots IN ACCESS EXCLUSIVE MODE');
    const daemon = startProcess(
      ['run'],
      daemonEnv({
        dataDir: path.join(dir, 'cut-off'),
        env: { SMSDROP_DATABASE_URL: url, SMSDROP_LEASE: '3s' },
      }),
    );
    after(async () => {
      daemon.kill('SIGKILL');
      await daemon.exited;
    });
    await waitUntil(
      async () =>
        (
          await pool.query(
            "SELECT 1 FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND datname = current_database()",
          )
        ).rowCount === 1,
      60_000,
      'the opening waiting on the lock',
      daemon.output,
    );
    await pg15.cluster.restart(2_000); // the lock goes with the server
    blocker.release(true);
    await pool.end().catch(() => undefined);
    await waitUntil(
      () => /watching .*inbox/.test(daemon.output()),
      90_000,
      'running',
      daemon.output,
    );
    // The wait is told (a warning, and the health check's 503 while it lasts), never an error.
    assert.doesNotMatch(daemon.output(), /unexpected error| error .*E_DATABASE_UNREACHABLE/);
  });

  test('the file waits for the server, then finishes: each number once', async () => {
    const sim = await startSimulatorProcess(dir, ['--latency-ms', '20-30']);
    after(() => sim.stop());
    const data = path.join(dir, 'data');
    const daemon = await startDaemon({
      dataDir: data,
      simulator: sim,
      env: {
        SMSDROP_DATABASE_URL: await pg15.cluster.freshDatabase(),
        SMSDROP_CONCURRENCY: '2',
        SMSDROP_LEASE: '3s',
      },
    });
    after(async () => {
      daemon.kill('SIGKILL');
      await daemon.exited;
    });
    fs.writeFileSync(path.join(data, 'inbox', 'orders.csv'), contactsCsv(400));
    await waitUntil(() => sim.records().length >= 20, 60_000, 'requests going out', daemon.output);
    await pg15.cluster.restart();
    await sleep(200);
    await waitUntil(
      () => listDir(path.join(data, 'done')).includes('orders.csv'),
      120_000,
      'the file done',
      daemon.output,
    );
    assert.deepEqual(listDir(path.join(data, 'failed')), []);
    assertEachOnce(sim.records(), numbersOf(400));
    assert.match(daemon.output(), /the journal's database did not answer|waits in processing/);
  });
});
