// A node lost mid-file (issue 34's first "done when"): two `smsdrop run` daemons on one PostgreSQL
// journal, a file dropped into the first, which is killed with SIGKILL while it sends. The second
// finishes the file's batches once the first's lease has passed, every number once, never more
// than SMSDROP_CONCURRENCY requests in flight across both (the simulator counts them); started
// again, the first closes the file into its own done/.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { after, describe, test } from 'node:test';
import {
  assertEachOnce,
  contactsCsv,
  daemonEnv,
  listDir,
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
const CONCURRENCY = 4;

describe('a node lost mid-file', { skip: postgresMissing() }, () => {
  const pg15 = usePostgres();
  const work = tempDir('pg-node-loss');
  const procs: Proc[] = [];
  after(async () => {
    for (const p of procs) p.kill('SIGKILL');
    await Promise.all(procs.map((p) => p.exited));
    fs.rmSync(work, { recursive: true, force: true });
  });

  test('its batches are finished by the other node, once; back, it files the file in its done/', async () => {
    const url = await pg15.cluster.freshDatabase();
    const provider = await recordingSimulator(procs, path.join(work, 'accepted.jsonl'), 50);
    // 50 ms an answer: the file takes seconds to send, so the kill lands mid-file
    const env = nodeSettings(provider, url, {
      SMSDROP_LEASE: '3s',
      SMSDROP_CONCURRENCY: String(CONCURRENCY),
    });
    const dirA = path.join(work, 'a');
    const start = async (name: string, dataDir: string) => {
      const proc = await startDaemon({ dataDir, env: env(name) });
      procs.push(proc);
      return proc;
    };
    const a = await start('a', dirA);
    const b = await start('b', path.join(work, 'b'));
    fs.writeFileSync(path.join(dirA, 'inbox', 'list.csv'), contactsCsv(ROWS));
    const sent = provider.sent;
    await waitUntil(() => sent() >= 40, 120_000, 'a sending', a.output);
    a.kill('SIGKILL');
    await a.exited;
    const atKill = sent();
    assert.ok(atKill < ROWS, `killed mid-file (${atKill} of ${ROWS} sent)`);
    await waitUntil(() => sent() >= ROWS, 180_000, 'b finishing the file', b.output);
    assertEachOnce(provider.records(), numbersOf(ROWS));
    assert.deepEqual(listDir(path.join(dirA, 'done')), [], 'a is down: nobody filed it yet');
    const back = startProcess(['run'], daemonEnv({ dataDir: dirA, env: env('a') }));
    procs.push(back);
    await waitUntil(
      () => fs.existsSync(path.join(dirA, 'done', 'list.csv')),
      120_000,
      'a, back, filing the file',
      back.output,
    );
    assert.ok(fs.existsSync(path.join(dirA, 'done', 'list.result.csv')), 'its result file too');
    assert.deepEqual(listDir(path.join(work, 'b', 'done')), [], "nothing in b's done/");
    assertEachOnce(provider.records(), numbersOf(ROWS));
    provider.process.kill('SIGTERM');
    await provider.process.exited;
    const peak = /at most (\d+) at once/.exec(provider.process.output());
    assert.ok(peak, provider.process.output());
    assert.ok(Number(peak[1]) <= CONCURRENCY, `at most ${peak[1]} requests at once`);
  });
});
