// Each daemon sharing a PostgreSQL journal keeps its own state (its process, what its requests
// wait for) in a row of its node's; the pause stays the account's, one row for all. Two nodes'
// writes do not overwrite each other, and status (the dashboard reads the same) shows the state of
// the daemon holding its data directory with the account's pause.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, describe, test } from 'node:test';
import type pg from 'pg';
import { acquireLock } from '../../src/datadir/lock.js';
import { daemonStateOf, pgDaemonState } from '../../src/pgjournal/daemonState.js';
import type { WebhookTargets } from '../../src/pgjournal/outbox.js';
import { pgReadStore } from '../../src/pgjournal/readStore.js';
import { migratePostgres, openPool } from '../../src/pgjournal/schema.js';
import { readStatus } from '../../src/report/status.js';
import { postgresMissing, usePostgres } from './cluster.js';

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'smsdrop-pg-nodestate-'));
after(() => fs.rmSync(dir, { recursive: true, force: true }));

/** Another daemon's process on this host: any pid but this test's. */
const OTHER_PID = process.pid + 1;

describe("each node's daemon state", { skip: postgresMissing() }, () => {
  const pg15 = usePostgres();

  async function journal(): Promise<pg.Pool> {
    const pool = openPool(await pg15.cluster.freshDatabase(), 4);
    pool.on('error', () => undefined);
    after(() => pool.end());
    await migratePostgres(pool);
    return pool;
  }

  test("two nodes keep their own process and waiting; the pause is the account's", async () => {
    const pool = await journal();
    const targets: WebhookTargets = { ids: [] };
    const a = pgDaemonState(pool, targets, 'node-a');
    const b = pgDaemonState(pool, targets, 'node-b');
    await a.setPause({ paused: null });
    await a.setWaiting('the message window of 13800000001 (until 10:00)');
    await b.setPause({ paused: null, pid: OTHER_PID });
    await b.setWaiting(null, OTHER_PID);

    const ofA = await daemonStateOf(pool, process.pid);
    const ofB = await daemonStateOf(pool, OTHER_PID);
    assert.equal(ofA?.pid, process.pid, "A's process, though B wrote last");
    assert.equal(ofA?.waiting, 'the message window of 13800000001 (until 10:00)');
    assert.equal(ofB?.pid, OTHER_PID);
    assert.equal(ofB?.waiting, null);

    await b.setPause({ paused: '111142: balance', code: 'E_PROVIDER_BALANCE', pid: OTHER_PID });
    for (const pid of [process.pid, OTHER_PID]) {
      const state = await daemonStateOf(pool, pid);
      assert.equal(state?.pid, pid);
      assert.equal(state?.paused, '111142: balance', 'the pause is seen by every node');
      assert.equal(state?.paused_code, 'E_PROVIDER_BALANCE');
      assert.ok(state?.paused_since);
    }

    const data = fs.mkdtempSync(path.join(dir, 'data-'));
    const lock = acquireLock(data, 'smsdrop daemon (test)'); // this process: node A
    after(() => lock.release());
    const status = await readStatus(pgReadStore(pool), data);
    assert.equal(status.process?.pid, process.pid);
    assert.equal(status.waiting, 'the message window of 13800000001 (until 10:00)');
    assert.deepEqual(
      { ...status.paused, since: status.paused?.since ? 'set' : null },
      { reason: '111142: balance', code: 'E_PROVIDER_BALANCE', since: 'set', source: 'daemon' },
    );
  });
});
