// `smsdrop drain` on a node of a PostgreSQL journal: the node stops taking work, finishes its
// requests in flight and exits 0; the other node sends the rest of its file at once. The lease is
// an hour long, so the other node can only have taken the batches because the drained node gave
// them up, not because they passed. Real daemons, the real simulator.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { after, describe, test } from 'node:test';
import { readRecordFile } from '../../src/simulator/record.js';
import {
  assertEachOnce,
  cleanEnv,
  contactsCsv,
  CREDENTIALS,
  numbersOf,
  type Proc,
  startDaemon,
  startProcess,
  tempDir,
  waitUntil,
} from '../daemon/helpers.js';
import { postgresMissing, usePostgres } from './cluster.js';

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
    const recordFile = path.join(work, 'accepted.jsonl');
    const sim = startProcess(
      ['simulate', '--record', recordFile, '--latency-ms', '50'],
      cleanEnv(CREDENTIALS),
    );
    procs.push(sim);
    const simUrl = /listening on (\S+)/.exec(await sim.waitFor(/listening on (\S+)/))![1]!;
    const env = (name: string) => ({
      ...CREDENTIALS,
      SMSDROP_BASE_URL: simUrl,
      SMSDROP_DATABASE_URL: url,
      SMSDROP_NODE_ID: name,
      SMSDROP_LEASE: '1h',
      SMSDROP_CONCURRENCY: '2',
    });
    const dirA = path.join(work, 'a');
    const a = await startDaemon({ dataDir: dirA, env: env('a') });
    procs.push(a);
    const b = await startDaemon({ dataDir: path.join(work, 'b'), env: env('b') });
    procs.push(b);
    fs.writeFileSync(path.join(dirA, 'inbox', 'list.csv'), contactsCsv(ROWS));
    const sent = () => (fs.existsSync(recordFile) ? readRecordFile(recordFile).length : 0);
    await waitUntil(() => sent() >= 20, 120_000, 'a sending', a.output);

    const drain = startProcess(['drain'], cleanEnv({ SMSDROP_DATA_DIR: dirA }));
    procs.push(drain);
    assert.deepEqual(await drain.exited, { code: 0, signal: null }, drain.output());
    assert.match(drain.output(), /drained: the daemon \(pid \d+\) has exited/);
    assert.deepEqual(await a.exited, { code: 0, signal: null }, a.output());
    assert.match(a.output(), /draining: no new files or requests/);
    assert.ok(sent() < ROWS, `drained mid-file (${sent()} of ${ROWS} sent)`);

    await waitUntil(() => sent() >= ROWS, 120_000, 'b sending the rest', b.output);
    assertEachOnce(readRecordFile(recordFile), numbersOf(ROWS));
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
