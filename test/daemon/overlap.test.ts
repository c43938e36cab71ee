// The daemon and sending while reading: a file that changes after requests went out is refused
// into failed/ with a note that says so and a result file naming who got them; dropping the file
// back, now complete, sends only the rest. Every number exactly once, by the simulator's record.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { after, before, describe, it } from 'node:test';
import {
  assertEachOnce,
  listDir,
  type Proc,
  resultRows,
  type Simulator,
  startDaemon,
  startSimulatorProcess,
  tempDir,
  waitUntil,
} from './helpers.js';

const ROWS = 60_000;
const numbers = Array.from({ length: ROWS }, (_, i) => String(13_700_000_000 + i));
const csv = `phone,template,data1,data2\n${numbers.map((n) => `${n},1,same,5`).join('\n')}\n`;

describe(
  'smsdrop run: a file refused after requests went out while it was read',
  // no timeout of its own: scripts/run-tests.mjs bounds the file
  () => {
    let dir: string;
    let data: string;
    let sim: Simulator;
    let daemon: Proc;

    before(async () => {
      dir = tempDir('daemon-overlap');
      data = path.join(dir, 'data');
      sim = await startSimulatorProcess(dir, ['--latency-ms', '10-20']);
      daemon = await startDaemon({
        dataDir: data,
        simulator: sim,
        env: { SMSDROP_CONCURRENCY: '4' },
      });
    });

    after(async () => {
      daemon?.kill('SIGKILL');
      await daemon?.exited;
      await sim?.stop();
      fs.rmSync(dir, { recursive: true, force: true });
    });

    it('goes to failed/ with a note and a result file; dropped back complete, it sends only the rest', async () => {
      fs.writeFileSync(path.join(data, 'inbox', 'big.csv'), csv);
      const taken = path.join(data, 'processing', 'big.csv');
      // The first request means the file was taken and is being read: make it grow now.
      while (!fs.existsSync(sim.recordFile) || fs.statSync(sim.recordFile).size === 0)
        await sleep(2);
      const added = Array.from({ length: 500 }, (_, i) => String(13_900_000_000 + i));
      fs.appendFileSync(taken, added.map((n) => `${n},1,late,9\n`).join(''));
      const failed = path.join(data, 'failed');
      await waitUntil(
        () => fs.existsSync(path.join(failed, 'big.csv')),
        30_000,
        'big.csv in failed/',
        () => `${listDir(failed).join(', ')}\n${daemon.output()}`,
      );
      const sentBefore = sim.records().length;
      assert.ok(sentBefore > 0);
      assert.deepEqual(listDir(failed), ['big.csv', 'big.error.txt', 'big.result.csv']);
      const note = fs.readFileSync(path.join(failed, 'big.error.txt'), 'utf8');
      assert.match(note, /changed while it was being read/);
      assert.match(note, /request\(s\) had already gone out while the file was being read/);
      assert.match(
        note,
        new RegExp(`begins with the same ${Buffer.byteLength(csv)} bytes continues this one`),
      );
      assert.match(
        note,
        /drop the same file into inbox\/ again: only what was not sent yet is sent/,
      );
      const accepted = resultRows(path.join(failed, 'big.result.csv')).filter(
        (r) => r.status === 'accepted',
      );
      assert.equal(accepted.length, sentBefore * 200, 'the result file names everyone who got it');

      // What an operator does: put the (now complete) file back. It continues the first run.
      fs.renameSync(path.join(failed, 'big.csv'), path.join(data, 'inbox', 'big.csv'));
      // (done/ names it "big (2).csv": failed/ still holds big.error.txt and big.result.csv)
      const done = path.join(data, 'done');
      await waitUntil(
        () => listDir(done).some((n) => /^big( \(\d+\))?\.csv$/.test(n)),
        60_000,
        'big.csv in done/',
        () => daemon.output(),
      );
      assertEachOnce(sim.records(), [...numbers, ...added]);
    });
  },
);
