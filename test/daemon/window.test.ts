// The sending window, in the real daemon against the simulator (its own process): outside it a
// dropped file is read in but no request starts, the log says until when, and a stop leaves the
// file in processing/; started again with the window open, it sends each number once. And a
// message window (rate limit): what it does not allow waits, and `smsdrop status` says so.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { after, before, describe, it } from 'node:test';
import {
  assertEachOnce,
  closedWindow,
  cleanEnv,
  contactsCsv,
  listDir,
  numbersOf,
  type Proc,
  type Simulator,
  startDaemon,
  startProcess,
  startSimulatorProcess,
  tempDir,
  waitUntil,
} from './helpers.js';

describe(
  'smsdrop run with a sending window, and with a message window',
  // no timeout of its own: scripts/run-tests.mjs bounds the file
  () => {
    let dir: string;
    let data: string;
    let sim: Simulator;
    let daemon: Proc | undefined;

    before(async () => {
      dir = tempDir('daemon-window');
      data = path.join(dir, 'data');
      sim = await startSimulatorProcess(dir, ['--latency-ms', '0-3']);
    });

    after(async () => {
      daemon?.kill('SIGKILL');
      await daemon?.exited;
      await sim?.stop();
      fs.rmSync(dir, { recursive: true, force: true });
    });

    it('reads a file in outside the window but starts no request, and says until when', async () => {
      const window = closedWindow();
      daemon = await startDaemon({
        dataDir: data,
        simulator: sim,
        env: { SMSDROP_SEND_WINDOW: window },
      });
      assert.match(
        daemon.output(),
        new RegExp(`requests start only within the sending window ${window} Asia/Shanghai`),
      );
      fs.writeFileSync(path.join(data, 'inbox', 'night.csv'), contactsCsv(5));
      await daemon.waitFor(
        /outside the sending window .* no request starts before \d\d:00 Asia\/Shanghai \(.*, in (?:\d+ h \d+ min|\d+ min \d+ s)\)/,
      ); // under an hour when the hour turned meanwhile
      await sleep(1000);
      assert.equal(sim.records().length, 0, 'nothing sent outside the window');
      const status = startProcess(['status'], cleanEnv({ SMSDROP_DATA_DIR: data }));
      assert.equal((await status.exited).code, 0, status.output());
      assert.match(
        status.output(),
        new RegExp(
          `PAUSED since .*: outside the sending window ${window} Asia/Shanghai; requests start at \\d{4}-`,
        ),
      );
      assert.match(status.output(), /night\.csv/);
      daemon.kill('SIGTERM');
      assert.equal((await daemon.exited).code, 0, daemon.output());
      assert.deepEqual(
        listDir(path.join(data, 'processing')),
        ['night.csv'],
        'the file waits in processing/',
      );
      assert.deepEqual(listDir(path.join(data, 'done')), []);
    });

    it('sends it, each number once, when started again with the window open', async () => {
      daemon = await startDaemon({ dataDir: data, simulator: sim });
      await waitUntil(
        () => fs.existsSync(path.join(data, 'done', 'night.result.csv')),
        20_000,
        'night.csv in done/',
        () => daemon!.output(),
      );
      assertEachOnce(sim.records(), numbersOf(5));
    });

    it('sends what the window allows, holds the rest (status says WAITING, not paused), and a stop leaves it pending', async () => {
      daemon?.kill('SIGTERM'); // the last test's, done with night.csv
      await daemon?.exited;
      const data = path.join(dir, 'data-message-window');
      const before = sim.records().length;
      // Personalised rows: one number per request; three fit in the window, two wait for the hour.
      daemon = await startDaemon({
        dataDir: data,
        simulator: sim,
        env: { SMSDROP_MESSAGE_WINDOW: '3/1h', SMSDROP_MAX_PER_REQUEST: '2' },
      });
      fs.writeFileSync(path.join(data, 'inbox', 'capped.csv'), contactsCsv(5, { from: 100 }));
      await daemon.waitFor(
        /message window 3\/1h used up: the next request starts at \d{4}-.* \(in (?:\d+ h \d+ min|\d+ min \d+ s)\); rows wait, nothing is lost/,
      );
      await waitUntil(
        () => sim.records().length - before === 3,
        10_000,
        'three requests',
        () => daemon!.output(),
      );
      await sleep(500);
      assert.equal(sim.records().length - before, 3, 'no more than the window allows');
      const status = startProcess(['status'], cleanEnv({ SMSDROP_DATA_DIR: data }));
      assert.equal((await status.exited).code, 0, status.output());
      assert.match(
        status.output(),
        /WAITING: message window 3\/1h used up; the next request starts at \d{4}-/,
      );
      assert.doesNotMatch(status.output(), /PAUSED/);
      daemon.kill('SIGTERM');
      assert.equal((await daemon.exited).code, 0, daemon.output());
      assert.deepEqual(
        listDir(path.join(data, 'processing')),
        ['capped.csv'],
        'the file waits in processing/',
      );
    });
  },
);
