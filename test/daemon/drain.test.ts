// `smsdrop drain` on a daemon of a SQLite journal (one node): its requests in flight finish, it
// exits 0, the file stays in processing/, and the next start sends the rest, each number once.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { after, describe, test } from 'node:test';
import {
  assertEachOnce,
  cleanEnv,
  contactsCsv,
  listDir,
  numbersOf,
  type Proc,
  startDaemon,
  startProcess,
  startSimulatorProcess,
  type Simulator,
  tempDir,
  waitUntil,
} from './helpers.js';

const ROWS = 400;

describe('smsdrop drain on a SQLite daemon', () => {
  const work = tempDir('drain');
  const procs: Proc[] = [];
  let sim: Simulator | undefined;
  after(async () => {
    for (const p of procs) p.kill('SIGKILL');
    await Promise.all(procs.map((p) => p.exited));
    await sim?.stop();
    fs.rmSync(work, { recursive: true, force: true });
  });

  test('in flight finishes, exit 0, the rest at the next start', async () => {
    sim = await startSimulatorProcess(work, ['--latency-ms', '50']);
    const dataDir = path.join(work, 'data');
    const settings = { dataDir, simulator: sim, env: { SMSDROP_CONCURRENCY: '2' } };
    const daemon = await startDaemon(settings);
    procs.push(daemon);
    fs.writeFileSync(path.join(dataDir, 'inbox', 'list.csv'), contactsCsv(ROWS));
    await waitUntil(() => sim!.records().length >= 20, 120_000, 'sending', daemon.output);

    const drain = startProcess(['drain'], cleanEnv({ SMSDROP_DATA_DIR: dataDir }));
    procs.push(drain);
    assert.deepEqual(await drain.exited, { code: 0, signal: null }, drain.output());
    assert.deepEqual(await daemon.exited, { code: 0, signal: null }, daemon.output());
    assert.match(daemon.output(), /draining: .*the files left in processing\/ go on at the next/);
    assert.match(daemon.output(), /drained: nothing in flight/);
    assert.doesNotMatch(daemon.output(), /in doubt/);
    assert.ok(sim.records().length < ROWS, `drained mid-file (${sim.records().length} sent)`);
    assert.deepEqual(listDir(path.join(dataDir, 'processing')), ['list.csv']);

    const again = await startDaemon(settings);
    procs.push(again);
    await waitUntil(
      () => fs.existsSync(path.join(dataDir, 'done', 'list.result.csv')),
      120_000,
      'the next start finishing the file',
      again.output,
    );
    assertEachOnce(sim.records(), numbersOf(ROWS));
  });
});
