// A pass over a file's batches that ends before it sent all it claimed (a pause, a stop, a
// failure) gives those claims up: the node lives on, and were they kept (renewed with its other
// leases), no other node could send them, the node itself helping others would never look at
// them again (it looks only at batches no live node holds), and the file's reader would wait for
// them forever, its passes claiming nothing. A claim given up here but not in the journal (it
// could not be told) is no longer renewed, so it lapses.
import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, describe, test } from 'node:test';
import pLimit from 'p-limit';
import { DEMO_CREDENTIALS, loadConfig } from '../../src/config/index.js';
import { BUILT_IN_TEMPLATES } from '../../src/provider/connect.js';
import { LeaseKeeper } from '../../src/pgjournal/leases.js';
import { sendReadyBatches } from '../../src/send/index.js';
import { AccountPause, createRateLimiter } from '../../src/send/rate.js';
import { startSimulator } from '../../src/simulator/index.js';
import { postgresMissing, usePostgres } from './cluster.js';
import { journal, simulatorBatchesSql, simulatorClient } from './sendFixture.js';

const BATCHES = 30;

describe('claims a pass did not use', { skip: postgresMissing() }, () => {
  const pg15 = usePostgres();
  const config = loadConfig({
    configDir: mkdtempSync(path.join(os.tmpdir(), 'smsdrop-pgleft-')),
    env: { SMSDROP_CONCURRENCY: '2' },
  });

  test('a pass that pauses part-way leaves its unsent batches to the other nodes', async () => {
    const simulator = await startSimulator({
      accountSid: DEMO_CREDENTIALS.accountSid,
      authToken: DEMO_CREDENTIALS.authToken,
      appIds: [DEMO_CREDENTIALS.appId],
      templates: BUILT_IN_TEMPLATES,
      latencyMs: [5, 30],
    });
    after(() => simulator.close());
    const client = simulatorClient(simulator.url, config, config.concurrency);
    const j = await journal(pg15.cluster);
    await j.sql.query(simulatorBatchesSql(BATCHES));
    const a = await j.node({ node: 'a:1' });
    const pause = new AccountPause();
    // A helper's pass on node A (sendReadyBatches, no more to wait for): the account pauses at
    // its first outcome, when it has claimed the whole file but queued only a few batches.
    await sendReadyBatches(
      {
        send: a.store,
        client,
        config,
        limit: pLimit(config.concurrency),
        rateLimiter: createRateLimiter(),
        pause,
        onBatchDone: () => pause.pause('the test pauses the account', 'E_PROVIDER_FAILING'),
      },
      2,
    );
    const { rows } = await j.sql.query<{ id: number; lease_node: string | null }>(
      "SELECT id, lease_node FROM batches WHERE file_id = 2 AND state = 'planned' ORDER BY id",
    );
    assert.ok(rows.length > BATCHES / 2, `most batches still planned: ${rows.length}`);
    assert.deepEqual(
      rows.filter((r) => r.lease_node !== null),
      [],
      'no planned batch is still leased to the node whose pass ended',
    );
    // Node B (A alive, renewing its leases) can send every one of them.
    const b = await j.node({ node: 'b:2' });
    const { first, due } = await b.store.claimDueBatches({
      fileId: 2,
      now: Date.now(),
      afterId: 0,
      limit: BATCHES,
      skip: new Set(),
    });
    assert.deepEqual(
      [...first, ...due].map((t) => t.batch.id),
      rows.map((r) => r.id),
    );
  });

  test('a renewal extends only the leases the node still holds here', async () => {
    const j = await journal(pg15.cluster);
    // Batches 1..3 of file 1 leased to node a:1 for 30 s; the process holds only 1 and 2.
    await j.sql.query(
      `UPDATE batches SET lease_node = 'a:1', lease_until = clock_timestamp() + interval '30 seconds'
       WHERE id IN (1, 2, 3)`,
    );
    const keeper = new LeaseKeeper(j.pool(), { node: 'a:1', leaseMs: 60_000 });
    keeper.claimed([1, 2], performance.now() + 30_000);
    const until = async () =>
      (
        await j.sql.query<{ id: number; until: Date }>(
          'SELECT id, lease_until AS until FROM batches WHERE id IN (1, 2, 3) ORDER BY id',
        )
      ).rows.map((r) => r.until.getTime());
    const before = await until();
    await keeper.renew();
    const renewed = await until();
    assert.ok(renewed[0]! > before[0]! && renewed[1]! > before[1]!, 'held leases renewed');
    assert.equal(renewed[2], before[2], 'a lease given up here is left to lapse');
  });
});
