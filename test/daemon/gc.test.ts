// SQLite's native objects collected outside JavaScript: the daemon and `send` run under
// --expose-gc with a preload (test/journal/gcPreload.ts) that leaves statements for the collector
// and collects every 20 ms, half of the time from an event-loop task as V8's idle collections do,
// through a real send and a SIGTERM: each ends with exit code 0. better-sqlite3 12 built against
// the headers of Node 24.19 or later (on a 24.x runtime) aborts such a process with SIGABRT when a
// statement is collected that way (nodejs/node#65446): src/journal/sqlite.ts loads 13 on Node 22
// and later.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { pathToFileURL } from 'node:url';
import {
  assertEachOnce,
  contactsCsv,
  daemonEnv,
  numbersOf,
  REPO,
  type Simulator,
  startProcess,
  startSimulatorProcess,
  tempDir,
  waitUntil,
} from './helpers.js';

const GC_ARGS = [
  '--expose-gc',
  '--import',
  'tsx',
  '--import',
  pathToFileURL(path.join(REPO, 'test', 'journal', 'gcPreload.ts')).href,
];

describe(`SQLite under forced garbage collection (Node ${process.version})`, () => {
  let dir: string;
  let sim: Simulator;

  before(async () => {
    dir = tempDir('daemon-gc');
    sim = await startSimulatorProcess(dir, ['--latency-ms', '1-3']);
  });

  after(async () => {
    await sim?.stop();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('the daemon sends a file, idles, and exits 0 on SIGTERM', async () => {
    const data = path.join(dir, 'daemon');
    const daemon = startProcess(
      ['run'],
      daemonEnv({ dataDir: data, simulator: sim }),
      undefined,
      GC_ARGS,
    );
    await daemon.waitFor(/watching .*inbox/);
    fs.writeFileSync(path.join(data, 'inbox', 'a.csv'), contactsCsv(300));
    const result = path.join(data, 'done', 'a.result.csv');
    await waitUntil(() => fs.existsSync(result), 60_000, 'a.csv in done/', daemon.output);
    // Idle for a while: the statements of that file's work are collected now, not at exit.
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    daemon.kill('SIGTERM');
    assert.deepEqual(await daemon.exited, { code: 0, signal: null }, daemon.output());
    assertEachOnce(sim.records(), numbersOf(300));
  });

  it('`smsdrop send` sends a file and exits 0', async () => {
    const data = path.join(dir, 'send');
    fs.mkdirSync(data);
    const file = path.join(dir, 'b.csv');
    fs.writeFileSync(file, contactsCsv(200, { from: 1_000 }));
    const send = startProcess(
      ['send', file, '--json'],
      daemonEnv({ dataDir: data, simulator: sim }),
      undefined,
      GC_ARGS,
    );
    assert.deepEqual(await send.exited, { code: 0, signal: null }, send.output());
    assert.match(send.output(), /"accepted":200\b/);
  });
});
