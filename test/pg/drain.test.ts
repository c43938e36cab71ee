// `smsdrop drain` on a node of a PostgreSQL journal: the node stops taking work, finishes its
// requests in flight and exits 0; the other node sends the rest of its file at once. The lease is
// an hour long, so the other node can only have taken the batches because the drained node gave
// them up, not because they passed. Real daemons, the real simulator.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { after, describe, test } from 'node:test';
import {
  assertEachOnce,
  cleanEnv,
  contactsCsv,
  numbersOf,
  type Proc,
  startDaemon,
  startProcess,
  tempDir,
  waitUntil,
} from '../daemon/helpers.js';
import { postgresMissing, usePostgres } from './cluster.js';
import { nodeSettings, recordingSimulator } from './nodeSetup.js';

const ROWS = 600;

describe('smsdrop drain on a node of a cluster', { skip: postgresMissing() }, () => {
  const pg15 = usePostgres();
  const work = tempDir('pg-drain');
  const procs: Proc[] = [];
  after(async () => {
    for (const p of procs) p.kill('SIGKILL');
    await Promise.all(procs.map((p) => p.exited));
    fs.rmSync(work, { recursive: true, force: true });
  });

  test("the node exits 0 and the other sends its file's remaining batches", async () => {
    const url = await pg15.cluster.freshDatabase();
    const provider = await recordingSimulator(procs, path.join(work, 'accepted.jsonl'), 50);
    const env = nodeSettings(provider, url, {
      SMSDROP_LEASE: '1h',
      SMSDROP_CONCURRENCY: '2',
    });
    const dirA = path.join(work, 'a');
    const a = await startDaemon({ dataDir: dirA, env: env('a') });
    procs.push(a);
    const b = await startDaemon({ dataDir: path.join(work, 'b'), env: env('b') });
    procs.push(b);
    fs.writeFileSync(path.join(dirA, 'inbox', 'list.csv'), contactsCsv(ROWS));
    const sent = provider.sent;
    await waitUntil(() => sent() >= 20, 120_000, 'a sending', a.output);

    const drain = startProcess(['drain'], cleanEnv({ SMSDROP_DATA_DIR: dirA }));
    procs.push(drain);
    assert.deepEqual(await drain.exited, { code: 0, signal: null }, drain.output());
    assert.match(drain.output(), /drained: the daemon \(pid \d+\) has exited/);
    assert.deepEqual(await a.exited, { code: 0, signal: null }, a.output());
    assert.match(a.output(), /draining: no new files or requests/);
    assert.ok(sent() < ROWS, `drained mid-file (${sent()} of ${ROWS} sent)`);

    await waitUntil(() => sent() >= ROWS, 120_000, 'b sending the rest', b.output);
    assertEachOnce(provider.records(), numbersOf(ROWS));
  });

  test('no daemon on the data directory: exit 2, one line', async () => {
    const drain = startProcess(
      ['drain'],
      cleanEnv({ SMSDROP_DATA_DIR: path.join(work, 'nobody') }),
    );
    assert.deepEqual(await drain.exited, { code: 2, signal: null });
    assert.match(drain.output(), /^smsdrop: E_USAGE: drain: no daemon runs on .*nobody/);
  });
});
