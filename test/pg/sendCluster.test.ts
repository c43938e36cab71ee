// The sender itself (src/send, sendFile) on two nodes' PostgreSQL SendStores, against the
// simulator over loopback: both send one file, each message once; a batch a dead node left
// `sending` is finished by the other under the same reqId, the simulator refusing it twice.
import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, describe, test } from 'node:test';
import pLimit from 'p-limit';
import { DEMO_CREDENTIALS, loadConfig } from '../../src/config/index.js';
import { BUILT_IN_TEMPLATES } from '../../src/provider/connect.js';
import type { ProviderClient } from '../../src/provider/client.js';
import { sendFile } from '../../src/send/index.js';
import { AccountPause, createRateLimiter } from '../../src/send/rate.js';
import { type RunningSimulator, startSimulator } from '../../src/simulator/index.js';
import type { PgSendStore } from '../../src/pgjournal/sendStore.js';
import { postgresMissing, usePostgres } from './cluster.js';
import {
  type Journal,
  journal,
  leasesPassed,
  simulatorBatchesSql,
  simulatorClient,
} from './sendFixture.js';

const BATCHES = 30;
const phone = (batch: number, n: number) => `13${n}${String(batch).padStart(8, '0')}`;

const EXPECTED = Array.from({ length: BATCHES }, (_, i) => [phone(i + 1, 8), phone(i + 1, 9)])
  .flat()
  .sort();

describe('two nodes sending one file', { skip: postgresMissing() }, () => {
  const pg15 = usePostgres();
  let simulator: RunningSimulator;

  async function setUp(): Promise<Journal> {
    simulator = await startSimulator({
      accountSid: DEMO_CREDENTIALS.accountSid,
      authToken: DEMO_CREDENTIALS.authToken,
      appIds: [DEMO_CREDENTIALS.appId],
      templates: BUILT_IN_TEMPLATES,
      latencyMs: [5, 30],
      keepRecords: true,
    });
    after(() => simulator.close());
    const j = await journal(pg15.cluster);
    await j.sql.query(simulatorBatchesSql(BATCHES));
    return j;
  }

  const config = loadConfig({
    configDir: mkdtempSync(path.join(os.tmpdir(), 'smsdrop-pgsend-')),
    env: { SMSDROP_CONCURRENCY: '4' },
  });

  function client(): ProviderClient {
    return simulatorClient(simulator.url, config, config.concurrency);
  }

  /** One node's sender on file 2; resolves with how many batches it settled. */
  async function send(store: PgSendStore): Promise<{ state: string; settled: number }> {
    let settled = 0;
    const result = await sendFile(
      {
        send: store,
        client: client(),
        config,
        limit: pLimit(config.concurrency),
        rateLimiter: createRateLimiter(),
        pause: new AccountPause(),
        onBatchDone: () => void settled++,
      },
      2,
    );
    return { state: result.state, settled };
  }

  function sentNumbers(): string[] {
    return simulator.records.flatMap((r) => r.to).sort();
  }

  test('both nodes send, every number once, every batch accepted', async () => {
    const j = await setUp();
    const nodes = ['a:1', 'b:2'].map((node) =>
      j.node({ node, leaseMs: 3_000, maxClaim: 2 * config.concurrency }),
    );
    const [a, b] = await Promise.all(nodes);
    const results = await Promise.all([send(a!.store), send(b!.store)]);
    assert.deepEqual(
      results.map((r) => r.state),
      ['finished', 'finished'],
    );
    assert.equal(results[0].settled + results[1].settled, BATCHES);
    assert.ok(
      results.every((r) => r.settled > 0),
      JSON.stringify(results),
    );
    assert.deepEqual(sentNumbers(), EXPECTED);
    const { rows } = await j.sql.query<{ state: string; n: number; leased: number }>(
      'SELECT state, count(*)::int AS n, count(lease_node)::int AS leased FROM batches WHERE file_id = 2 GROUP BY state',
    );
    assert.deepEqual(rows, [{ state: 'accepted', n: BATCHES, leased: 0 }]);
  });

  test('a batch whose request left before its node died is finished by the other, once', async () => {
    const j = await setUp();
    const a = await j.node({ node: 'a:1', leaseMs: 1_500 }, false);
    const { first, due } = await a.store.claimDueBatches({
      fileId: 2,
      now: Date.now(),
      afterId: 0,
      limit: 1,
      skip: new Set(),
    });
    const toSend = [...first, ...due][0]!;
    const { batch } = toSend;
    const [attemptId] = await a.store.startAttempts([{ batch, reqId: batch.req_id }]);
    assert.ok(attemptId);
    // The request reaches the provider; A dies before it records the answer.
    const answer = await client().send({
      to: toSend.phones.split(','),
      appId: toSend.appId,
      templateId: toSend.templateId,
      datas: toSend.datas,
      reqId: batch.req_id,
    });
    assert.equal(answer.kind, 'accepted');
    const b = await j.node({ node: 'b:2' });
    const result = await send(b.store); // waits for A's lease, then takes the batch over
    assert.deepEqual(result, { state: 'finished', settled: BATCHES });
    await leasesPassed(j.sql, 'a:1');
    assert.deepEqual(sentNumbers(), EXPECTED, 'the resend under the same reqId was refused');
    const { rows } = await j.sql.query<{ outcome: string; req_id: string }>(
      'SELECT outcome, req_id FROM attempts WHERE batch_id = $1 ORDER BY id',
      [batch.id],
    );
    assert.deepEqual(rows, [
      { outcome: 'interrupted', req_id: '' },
      { outcome: 'rejected:duplicate-request', req_id: '' },
    ]);
    const state = await j.sql.query<{ state: string }>('SELECT state FROM batches WHERE id = $1', [
      batch.id,
    ]);
    assert.equal(state.rows[0]!.state, 'accepted');
  });
});
