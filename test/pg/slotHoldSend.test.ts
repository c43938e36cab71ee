// The real sender (sendFile) on a PostgreSQL store and account slots gives a request's slot back
// held when the request got no answer (the provider may still count it: SMSDROP_PROVIDER_HOLD_MS),
// and free when it was answered.
import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { after, describe, test } from 'node:test';
import pLimit from 'p-limit';
import { DEMO_CREDENTIALS, loadConfig } from '../../src/config/index.js';
import { openAccountSlots } from '../../src/pgjournal/accountSlots.js';
import { BUILT_IN_TEMPLATES } from '../../src/provider/connect.js';
import { sendFile } from '../../src/send/index.js';
import { AccountPause, createRateLimiter } from '../../src/send/rate.js';
import { parseFaults, startSimulator } from '../../src/simulator/index.js';
import { postgresMissing, usePostgres } from './cluster.js';
import { journal, simulatorBatchesSql, simulatorClient } from './sendFixture.js';

const HOLD_MS = 3_000;

describe("a request's slot after its answer, or none", { skip: postgresMissing() }, () => {
  const pg15 = usePostgres();
  const config = loadConfig({
    configDir: mkdtempSync(path.join(os.tmpdir(), 'smsdrop-pghold-')),
    env: {
      SMSDROP_CONCURRENCY: '1',
      SMSDROP_RESPONSE_TIMEOUT_MS: '300',
      SMSDROP_MAX_ATTEMPTS: '1',
    },
  });

  /** Sends file 2 once to a simulator with `faults`; then the slot's row. */
  async function sendOnce(faults: string) {
    const sim = await startSimulator({
      accountSid: DEMO_CREDENTIALS.accountSid,
      authToken: DEMO_CREDENTIALS.authToken,
      appIds: [DEMO_CREDENTIALS.appId],
      templates: BUILT_IN_TEMPLATES,
      faults: parseFaults(faults),
      stallMs: 60_000,
    });
    after(() => sim.close());
    const j = await journal(pg15.cluster);
    await j.sql.query(simulatorBatchesSql(1));
    const { store, pool } = await j.node({ node: 'a', leaseMs: 3_000, maxClaim: 2 });
    const account = await openAccountSlots(pool, {
      node: 'a',
      leaseMs: 3_000,
      concurrency: 1,
      holdMs: HOLD_MS,
    });
    after(() => account.close());
    const client = simulatorClient(sim.url, config, 1);
    const pause = new AccountPause(0, { pause: account.pause, holdMs: 60_000 });
    const context = { send: store, client, config, pause, account };
    const began = Date.now();
    await sendFile({ ...context, limit: pLimit(1), rateLimiter: createRateLimiter() }, 2);
    const tookMs = Date.now() - began;
    // The slot's give-back is not awaited by the sender: read the row once it has landed.
    for (let waited = 0; waited < 10_000; waited += 50) {
      const { rows } = await j.sql.query<{ holder: string | null; held_ms: number | null }>(
        `SELECT holder, (extract(epoch FROM hold_until - clock_timestamp()) * 1000)::int AS held_ms
         FROM account_slots WHERE slot = 0`,
      );
      if (rows[0]!.holder === null) return { ...rows[0]!, requests: sim.requestCount, tookMs };
      await sleep(50);
    }
    assert.fail('the slot was never given back');
  }

  test('a request with no answer (in doubt) leaves its slot held for the hold', async () => {
    // The batch in doubt is sent again under its reqId: only once the first request's hold passed.
    const slot = await sendOnce('stall@1');
    assert.equal(slot.requests, 2);
    assert.ok(slot.tookMs >= HOLD_MS, `the second request waited the hold (${slot.tookMs} ms)`);
    assert.equal(slot.holder, null, 'given back');
    assert.ok(slot.held_ms !== null && slot.held_ms > HOLD_MS / 2, `held ${slot.held_ms} ms more`);
  });

  test('a request answered with an HTTP error frees its slot at once', async () => {
    // The provider is done with it: in doubt for the batch (the reqId decides), not for the slot.
    const slot = await sendOnce('http500@1');
    assert.equal(slot.holder, null);
    assert.equal(slot.held_ms, null, 'not held');
  });

  test('an answered request frees its slot at once', async () => {
    const slot = await sendOnce('');
    assert.deepEqual(slot, { holder: null, held_ms: null, requests: 1, tookMs: slot.tookMs });
  });
});
