// The account's pause across nodes with the real sender (sendFile) on two nodes' PostgreSQL
// stores and account slots: node a's provider answers "no balance left" (an account-stop code),
// node b's would send; node b stops too, and goes on once node a's cooldown is over.
import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, describe, test } from 'node:test';
import pLimit from 'p-limit';
import { DEMO_CREDENTIALS, loadConfig } from '../../src/config/index.js';
import { openAccountSlots } from '../../src/pgjournal/accountSlots.js';
import type { AccountSlots } from '../../src/ports/account.js';
import { BUILT_IN_TEMPLATES } from '../../src/provider/connect.js';
import { sendFile, type SendResult } from '../../src/send/index.js';
import { AccountPause, createRateLimiter } from '../../src/send/rate.js';
import { parseFaults, type RunningSimulator, startSimulator } from '../../src/simulator/index.js';
import { postgresMissing, usePostgres } from './cluster.js';
import { journal, simulatorBatchesSql, simulatorClient } from './sendFixture.js';

const BATCHES = 40;

describe("one node's account pause stops the other's sending", { skip: postgresMissing() }, () => {
  const pg15 = usePostgres();
  const config = loadConfig({
    configDir: mkdtempSync(path.join(os.tmpdir(), 'smsdrop-pgpause-')),
    env: { SMSDROP_CONCURRENCY: '2' },
  });

  async function simulator(faults: string, latencyMs: [number, number]): Promise<RunningSimulator> {
    const sim = await startSimulator({
      accountSid: DEMO_CREDENTIALS.accountSid,
      authToken: DEMO_CREDENTIALS.authToken,
      appIds: [DEMO_CREDENTIALS.appId],
      templates: BUILT_IN_TEMPLATES,
      latencyMs,
      keepRecords: true,
      faults: parseFaults(faults),
    });
    after(() => sim.close());
    return sim;
  }

  /** One node: its send store, account and pause switch, sending file 2 to `sim`. */
  async function node(j: Awaited<ReturnType<typeof journal>>, name: string, sim: RunningSimulator) {
    // as a daemon does (twice SMSDROP_CONCURRENCY): the node started first leaves the other some
    const { store, pool } = await j.node({
      node: name,
      leaseMs: 3_000,
      maxClaim: 2 * config.concurrency,
    });
    const account: AccountSlots = await openAccountSlots(pool, {
      node: name,
      leaseMs: 3_000,
      concurrency: config.concurrency,
      holdMs: 0,
    });
    after(() => account.close());
    const pause = new AccountPause(0, { pause: account.pause, holdMs: 60_000 });
    const client = simulatorClient(sim.url, config, config.concurrency);
    const send = (): Promise<SendResult> =>
      sendFile(
        {
          send: store,
          client,
          config,
          limit: pLimit(config.concurrency),
          rateLimiter: createRateLimiter(),
          account,
          pause,
        },
        2,
      );
    return { pause, send, store };
  }

  test('node b pauses with node a, and goes on when node a does', async () => {
    const j = await journal(pg15.cluster);
    await j.sql.query(simulatorBatchesSql(BATCHES));
    // Node a's provider refuses every request for the account; node b's answers slowly, so that
    // its file is far from done when node a pauses.
    const simA = await simulator('status=111142@1', [1, 5]);
    const simB = await simulator('', [150, 250]);
    const a = await node(j, 'a', simA);
    const b = await node(j, 'b', simB);
    const [resultA, resultB] = await Promise.all([a.send(), b.send()]);
    assert.deepEqual(resultA, {
      state: 'paused',
      reason: resultA.state === 'paused' ? resultA.reason : '',
      code: 'E_PROVIDER_BALANCE',
    });
    assert.equal(resultB.state, 'paused', 'node b stopped for the account');
    assert.equal(resultB.state === 'paused' && resultB.code, 'E_PROVIDER_BALANCE');
    assert.match(resultB.state === 'paused' ? resultB.reason : '', /\(paused by node a\)/);
    const sentBeforeResume = simB.records.length;
    assert.ok(sentBeforeResume < BATCHES, `node b sent ${sentBeforeResume} of ${BATCHES}`);

    const cooling = Date.now();
    const cooldownB = b.pause.cooldown(60_000);
    a.pause.resume(); // node a's cooldown is over
    await cooldownB;
    assert.ok(Date.now() - cooling < 30_000, 'node b went on with node a');
    b.pause.resume();
    await a.store.close(); // node a stops: its claimed batches go back for node b to send
    assert.equal((await b.send()).state, 'finished', 'node b sends the rest, node a gone quiet');
    const numbers = simB.records.flatMap((r) => r.to);
    assert.equal(numbers.length, 2 * BATCHES, 'every number once, all through node b');
    assert.equal(new Set(numbers).size, 2 * BATCHES);
  });
});
