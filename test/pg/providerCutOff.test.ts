// One node cut off from the provider alone (its SMSDROP_BASE_URL a closed port): two `smsdrop run`
// daemons on one PostgreSQL journal. The cut-off node pauses itself only: its /healthz answers 503
// and `status` on its data directory says why; it hands its claims back, and the other node,
// which never pauses, sends every number once. Once the file is sent, the cut-off node files it.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import net, { type AddressInfo } from 'node:net';
import path from 'node:path';
import { after, describe, test } from 'node:test';
import { smsdrop } from '../cli/helpers.js';
import {
  assertEachOnce,
  contactsCsv,
  CREDENTIALS,
  httpUrlOf,
  listDir,
  numbersOf,
  type Proc,
  startDaemon,
  startSimulatorProcess,
  tempDir,
  waitUntil,
} from '../daemon/helpers.js';
import { postgresMissing, usePostgres } from './cluster.js';

const ROWS = 120;

/** A loopback port nothing listens on (taken, then let go). */
async function closedPort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

describe('a node cut off from the provider alone', { skip: postgresMissing() }, () => {
  const pg15 = usePostgres();
  const work = tempDir('pg-provider-cut');
  const procs: Proc[] = [];
  after(async () => {
    for (const p of procs) p.kill('SIGKILL');
    await Promise.all(procs.map((p) => p.exited));
    fs.rmSync(work, { recursive: true, force: true });
  });

  test('pauses that node only; the other sends every number once', async () => {
    const url = await pg15.cluster.freshDatabase();
    const sim = await startSimulatorProcess(work, ['--latency-ms', '20']);
    after(() => sim.stop());
    const env = (name: string, baseUrl: string) => ({
      ...CREDENTIALS,
      SMSDROP_BASE_URL: baseUrl,
      SMSDROP_DATABASE_URL: url,
      SMSDROP_NODE_ID: name,
      SMSDROP_LEASE: '3s',
      SMSDROP_CONCURRENCY: '4',
      SMSDROP_CONNECT_TIMEOUT_MS: '500',
      SMSDROP_PAUSE_AFTER_FAILURES: '3',
      SMSDROP_PAUSE_COOLDOWN_MS: '2000',
    });
    const dirA = path.join(work, 'a');
    const envA = env('a', `http://127.0.0.1:${await closedPort()}`);
    const a = await startDaemon({ dataDir: dirA, env: envA });
    procs.push(a);
    const b = await startDaemon({ dataDir: path.join(work, 'b'), env: env('b', sim.url) });
    procs.push(b);
    const health = async (p: Proc) => {
      const res = await fetch(`${httpUrlOf(p)}/healthz`);
      return { status: res.status, body: JSON.stringify(await res.json()) };
    };
    fs.writeFileSync(path.join(dirA, 'inbox', 'list.csv'), contactsCsv(ROWS));
    await waitUntil(
      () => /sending paused on this node/.test(a.output()),
      60_000,
      'a pausing',
      a.output,
    );
    const healthA = await health(a);
    assert.equal(healthA.status, 503, healthA.body);
    assert.match(healthA.body, /sending paused: the provider failed 3 requests in a row/);
    const status = await smsdrop(['status'], { ...envA, SMSDROP_DATA_DIR: dirA });
    assert.match(status.stdout, /WAITING: sending paused on this node: E_PROVIDER_UNREACHABLE/);
    assert.doesNotMatch(status.stdout, /PAUSED/, 'not the account');

    // b is never held: its health is looked at all the while it sends
    const healthB: number[] = [];
    const bSentAll = async () => {
      healthB.push((await health(b)).status);
      return sim.records().length >= ROWS;
    };
    await waitUntil(bSentAll, 120_000, 'b sending it all', b.output);
    assert.deepEqual([...new Set(healthB)], [200], 'b never paused');
    assertEachOnce(sim.records(), numbersOf(ROWS));
    assert.doesNotMatch(b.output(), /paused/, 'b never paused');
    // a, trying again after each cooldown, finds nothing left to send and files the file
    await waitUntil(
      () => listDir(path.join(dirA, 'done')).includes('list.result.csv'),
      120_000,
      'a filing the file',
      a.output,
    );
    assert.deepEqual(listDir(path.join(dirA, 'failed')), []);
  });
});
