// Stopping the daemon in the middle of a large file, politely (SIGTERM) and not (SIGKILL): the
// file stays in processing/, a restart finishes it, and the simulator's record shows every
// message exactly once: no duplicate, no loss. And one daemon per data directory.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { after, before, describe, it } from 'node:test';
import { clearOfDayChange } from '../dayChange.js';
import {
  acceptedPerNumber,
  assertEachOnce,
  contactsCsv,
  listDir,
  numbersOf,
  type Proc,
  resultRows,
  type Simulator,
  startDaemon,
  startProcess,
  daemonEnv,
  startSimulatorProcess,
  tempDir,
  waitUntil,
} from './helpers.js';

const ROWS = 2000;
const GRACE_MS = 10_000;
// Every row a different message, so one request per row: long enough to interrupt.
const LARGE = {
  SMSDROP_CONCURRENCY: '4',
  SMSDROP_GRACE_MS: String(GRACE_MS),
  SMSDROP_PROGRESS_INTERVAL_MS: '1000',
};

describe('smsdrop run: interrupted during a large file', () => {
  let dir: string;
  let sim: Simulator;
  const running: Proc[] = [];
  const daemon = async (data: string): Promise<Proc> => {
    const proc = await startDaemon({ dataDir: data, simulator: sim, env: LARGE });
    running.push(proc);
    return proc;
  };

  before(async () => {
    dir = tempDir('daemon-shutdown');
    sim = await startSimulatorProcess(dir, ['--latency-ms', '5-15']);
  });

  after(async () => {
    for (const proc of running) proc.kill('SIGKILL');
    await Promise.all(running.map((proc) => proc.exited));
    await sim?.stop();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  /**
   * Drops a large file, waits until part of it is sent, interrupts, restarts, checks the end state.
   */
  async function interruptAndResume(
    name: string,
    from: number,
    interrupt: (proc: Proc) => Promise<void>,
  ): Promise<void> {
    await clearOfDayChange(30_000); // an interrupted run's doubts are retried only on their own day
    const data = path.join(dir, name);
    const numbers = new Set(numbersOf(ROWS, from));
    const sentOfThisFile = () =>
      [...acceptedPerNumber(sim.records()).keys()].filter((n) => numbers.has(n)).length;

    const first = await daemon(data);
    fs.writeFileSync(path.join(data, 'inbox', 'big.csv'), contactsCsv(ROWS, { from, tag: name }));
    await waitUntil(() => sentOfThisFile() >= 150, 30_000, 'sending to be under way', first.output);
    await interrupt(first);
    const sentBefore = sentOfThisFile();
    assert.ok(sentBefore < ROWS, 'interrupted before the end');
    assert.deepEqual(
      listDir(path.join(data, 'processing')),
      ['big.csv'],
      'the file waits in processing/',
    );
    assert.deepEqual(listDir(path.join(data, 'done')), []);

    const second = await daemon(data);
    assert.match(second.output(), /resuming big\.csv/);
    await waitUntil(
      () => fs.existsSync(path.join(data, 'done', 'big.csv')),
      60_000,
      'done/big.csv',
      second.output,
    );
    assertEachOnce(
      sim.records().filter((r) => r.to.some((n) => numbers.has(n))),
      [...numbers],
    );
    const results = resultRows(path.join(data, 'done', 'big.result.csv'));
    assert.equal(results.length, ROWS);
    assert.equal(results.filter((r) => r.status === 'accepted').length, ROWS, 'every row accepted');
    assert.match(
      second.output(),
      /progress: \d+ rows done, \d+ to go, [\d.]+ requests\/s, ETA /,
      'a progress line while sending',
    );
    second.kill('SIGTERM');
    assert.equal((await second.exited).code, 0);
  }

  it('SIGTERM: exits 0 within the grace period; a restart finishes the file, no duplicate, no loss', async () => {
    await interruptAndResume('term', 0, async (proc) => {
      proc.kill('SIGTERM');
      const exit = await Promise.race([proc.exited, sleep(GRACE_MS + 5_000).then(() => undefined)]);
      assert.ok(exit, `still running after the grace period\n${proc.output()}`);
      assert.equal(exit.code, 0, proc.output());
      assert.match(proc.output(), /big\.csv: stopped with \d+ rows not sent yet/);
      assert.match(proc.output(), /stopped cleanly/);
    });
  });

  it('SIGKILL: a restart finishes the file, no duplicate, no loss', async () => {
    await interruptAndResume('kill', 10_000, async (proc) => {
      proc.kill('SIGKILL');
      assert.equal((await proc.exited).signal, 'SIGKILL');
    });
  });

  it('refuses a second daemon on the same data directory with status 2, naming the first', async () => {
    const data = path.join(dir, 'twice');
    const first = await daemon(data);
    const second = startProcess(['run'], daemonEnv({ dataDir: data, simulator: sim }));
    running.push(second);
    const { code } = await second.exited;
    assert.equal(code, 2, second.output());
    assert.match(
      second.output(),
      new RegExp(`another smsdrop process \\(pid ${first.child.pid}: smsdrop run`),
    );
    // The first one is undisturbed and still works.
    fs.writeFileSync(path.join(data, 'inbox', 'small.csv'), contactsCsv(2, { from: 20_000 }));
    await waitUntil(
      () => fs.existsSync(path.join(data, 'done', 'small.result.csv')),
      20_000,
      'done/small.result.csv',
      first.output,
    );
    first.kill('SIGTERM');
    assert.equal((await first.exited).code, 0);
  });

  it('with requests stuck past the grace period: exits 3 when it ends; a second signal exits at once', async () => {
    const stuck = await startSimulatorProcess(path.join(dir, 'stall-sim'), ['--faults', 'stall@1']);
    try {
      const stopAt = async (name: string, graceMs: number) => {
        const data = path.join(dir, name);
        const proc = await startDaemon({
          dataDir: data,
          simulator: stuck,
          env: { SMSDROP_GRACE_MS: String(graceMs) },
        });
        running.push(proc);
        const before = stuck.records().length;
        fs.writeFileSync(path.join(data, 'inbox', 'stuck.csv'), contactsCsv(3, { from: 30_000 }));
        await proc.waitFor(/taken stuck\.csv/);
        // The requests are out (the simulator records a request it stalls), and never answered.
        await waitUntil(
          () => stuck.records().length > before,
          20_000,
          'a stalled request',
          () => proc.output(),
        );
        proc.kill('SIGTERM');
        await proc.waitFor(/SIGTERM: stopping/);
        return proc;
      };
      const patient = await stopAt('grace-over', 1_000);
      assert.equal((await patient.exited).code, 3, patient.output());
      assert.match(patient.output(), /grace period of 1000 ms over/);
      const forced = await stopAt('forced', 60_000);
      forced.kill('SIGTERM');
      assert.equal((await forced.exited).code, 130, forced.output());
      assert.match(forced.output(), /SIGTERM again: exiting now/);
    } finally {
      await stuck.stop();
    }
  });
});
