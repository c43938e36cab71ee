// `smsdrop run` started while a one-shot command holds the data directory (a foreground `smsdrop
// resume` or `send`, an operator's `prune`) waits for it and then runs: exiting 2, a set-up error
// that pm2 does not restart, would keep the daemon down. Another daemon's lock is still a set-up
// error: one line, exit 2.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { after, before, describe, it } from 'node:test';
import {
  daemonEnv,
  type Simulator,
  startProcess,
  startSimulatorProcess,
  tempDir,
} from './helpers.js';

/** A live process named in dataDir's lock as `what`, as acquireLock writes it. */
function holdLock(dataDir: string, what: string): { kill(): void } {
  const holder = spawn(process.execPath, ['-e', 'setTimeout(() => {}, 120000)'], {
    stdio: 'ignore',
  });
  after(() => holder.kill('SIGKILL'));
  fs.writeFileSync(
    path.join(dataDir, 'smsdrop.lock'),
    JSON.stringify({ pid: holder.pid, what, since: new Date().toISOString() }),
  );
  return { kill: () => holder.kill('SIGKILL') };
}

describe('smsdrop run and another process holding the data directory', () => {
  let sim: Simulator;
  before(async () => {
    sim = await startSimulatorProcess(tempDir('lock-wait-sim'));
  });
  after(() => sim.stop());

  it('waits for a one-shot command to finish, then runs', async () => {
    const dataDir = tempDir('lock-wait');
    const holder = holdLock(dataDir, 'smsdrop resume list.csv');
    const daemon = startProcess(['run'], daemonEnv({ dataDir, simulator: sim }));
    after(() => daemon.kill('SIGKILL'));
    await daemon.waitFor(
      /in use by pid \d+ \(smsdrop resume list\.csv\); waiting for it to finish/,
    );
    await sleep(1_500);
    assert.doesNotMatch(daemon.output(), /watching/, 'not before the command is done');
    holder.kill(); // the command ends: its lock is a dead process's, taken over
    await daemon.waitFor(/watching .*inbox/, 30_000);
    daemon.kill('SIGTERM');
    assert.deepEqual(await daemon.exited, { code: 0, signal: null });
  });

  it('exits 2 at once, in one line, when another daemon holds it', async () => {
    const dataDir = tempDir('lock-daemon');
    holdLock(dataDir, 'smsdrop run (daemon)');
    const daemon = startProcess(['run'], daemonEnv({ dataDir, simulator: sim }));
    after(() => daemon.kill('SIGKILL'));
    assert.equal((await daemon.exited).code, 2);
    assert.match(
      daemon.output(),
      /E_DATA_DIR_LOCKED: another smsdrop process \(pid \d+: smsdrop run \(daemon\)\)/,
    );
    assert.doesNotMatch(daemon.output(), /waiting|\n\s+at /);
  });
});
