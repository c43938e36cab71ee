// A bad provider day: an account-fatal answer (111142, balance insufficient) pauses all sending,
// the log says what to fix, new files are still taken in meanwhile, and after the cooldown the
// same process sends the rest: no crash, no restart, every message exactly once.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { openReader } from '../../src/journals/index.js';
import {
  assertEachOnce,
  contactsCsv,
  numbersOf,
  type Proc,
  resultRows,
  type Simulator,
  startDaemon,
  startSimulatorProcess,
  tempDir,
  waitUntil,
} from './helpers.js';

describe('smsdrop run: account-fatal answer', () => {
  let dir: string;
  let sim: Simulator;
  let daemon: Proc | undefined;

  before(async () => {
    dir = tempDir('daemon-pause');
    // The 30th request is answered "balance insufficient"; the two files make fewer than 60.
    sim = await startSimulatorProcess(dir, [
      '--latency-ms',
      '2-5',
      '--faults',
      'status=111142@/30',
    ]);
  });

  after(async () => {
    daemon?.kill('SIGKILL');
    await daemon?.exited;
    await sim?.stop();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('pauses sending, keeps taking files, resumes after the cooldown and sends each message once', async () => {
    const data = path.join(dir, 'data');
    daemon = await startDaemon({
      dataDir: data,
      simulator: sim,
      env: { SMSDROP_PAUSE_COOLDOWN_MS: '3000', SMSDROP_CONCURRENCY: '2' },
    });
    const d = daemon;
    fs.writeFileSync(path.join(data, 'inbox', 'first.csv'), contactsCsv(40));
    await d.waitFor(/sending paused for the account: E_PROVIDER_BALANCE: 111142/);
    assert.match(d.output(), /top up the account/, 'says what to fix');
    /** The daemon's record, as `smsdrop status` reads it beside the running daemon. */
    const pausedState = async () => {
      const reader = (await openReader({ dataDir: data }))!;
      try {
        return await reader.daemonState();
      } finally {
        reader.close();
      }
    };
    assert.match(
      (await pausedState())?.paused ?? '',
      /^111142/,
      'the pause is in the journal for `smsdrop status`',
    );
    assert.equal((await pausedState())?.paused_code, 'E_PROVIDER_BALANCE', 'with its code');
    fs.writeFileSync(path.join(data, 'inbox', 'second.csv'), contactsCsv(5, { from: 100 }));

    const doneDir = path.join(data, 'done');
    await waitUntil(
      () =>
        fs.existsSync(path.join(doneDir, 'first.result.csv')) &&
        fs.existsSync(path.join(doneDir, 'second.result.csv')),
      30_000,
      'both files in done/',
      d.output,
    );
    const out = d.output();
    assert.ok(
      out.indexOf('taken second.csv') < out.indexOf('cooldown over'),
      'the second file was taken during the pause',
    );
    assert.equal(
      resultRows(path.join(doneDir, 'first.result.csv')).filter((r) => r.status === 'accepted')
        .length,
      40,
    );
    assert.equal(
      resultRows(path.join(doneDir, 'second.result.csv')).filter((r) => r.status === 'accepted')
        .length,
      5,
    );
    assertEachOnce(sim.records(), [...numbersOf(40), ...numbersOf(5, 100)]);
    assert.equal(d.child.exitCode, null, 'still the same process');
    assert.equal((await pausedState())?.paused, null, 'no longer paused');
    assert.equal((await pausedState())?.paused_code, null);
    d.kill('SIGTERM');
    assert.equal((await d.exited).code, 0);
  });
});
