// A file that stopped part-way is not resumed by surprise days later (SMSDROP_RESUME_WITHIN):
// held up (here by a closed sending window, then a stop) and left for longer than the setting, it
// goes to failed/ with a note at the next start, nothing sent; dropped into inbox/ again, it sends
// the rest, each number once. With the setting off, it resumes as before.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { after, before, describe, it } from 'node:test';
import {
  assertEachOnce,
  closedWindow,
  contactsCsv,
  listDir,
  numbersOf,
  type Proc,
  type Simulator,
  startDaemon,
  startSimulatorProcess,
  tempDir,
  waitUntil,
} from './helpers.js';
import { withSqliteFile } from '../sqliteFile.js';

/** As if the file had been taken `days` ago: the journal's clock of it moved back. */
function ageFile(data: string, days: number): void {
  withSqliteFile(
    data,
    (db) =>
      db
        .prepare('UPDATE files SET created_at = ?')
        .run(new Date(Date.now() - days * 86_400_000).toISOString()),
    { write: true },
  );
}

describe('smsdrop run: a file stopped part-way long ago', () => {
  let dir: string;
  let sim: Simulator;
  let daemon: Proc | undefined;
  /**
   * Every daemon started, so that a failed test leaves none running (their pipes would hold the run
   * open).
   */
  const daemons: Proc[] = [];
  const start = async (settings: Parameters<typeof startDaemon>[0]) => {
    daemon = await startDaemon(settings);
    daemons.push(daemon);
    return daemon;
  };

  before(async () => {
    dir = tempDir('daemon-late');
    sim = await startSimulatorProcess(dir, ['--latency-ms', '0-3']);
  });

  after(async () => {
    for (const d of daemons) {
      d.kill('SIGKILL');
      await d.exited;
    }
    await sim?.stop();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  /**
   * A file read in outside the sending window, then a stop: it waits in processing/, nothing sent.
   */
  async function leaveInProcessing(data: string, name: string, csv: string): Promise<void> {
    daemon = await start({
      dataDir: data,
      simulator: sim,
      env: { SMSDROP_SEND_WINDOW: closedWindow() },
    });
    fs.writeFileSync(path.join(data, 'inbox', name), csv);
    await daemon.waitFor(/outside the sending window/);
    daemon.kill('SIGTERM');
    assert.equal((await daemon.exited).code, 0, daemon.output());
    assert.deepEqual(listDir(path.join(data, 'processing')), [name]);
  }

  it('is not resumed past SMSDROP_RESUME_WITHIN: it goes to failed/ with a note; dropped again, it sends the rest once', async () => {
    const data = path.join(dir, 'data');
    const csv = contactsCsv(5);
    await leaveInProcessing(data, 'monday.csv', csv);
    ageFile(data, 3);

    daemon = await start({ dataDir: data, simulator: sim });
    const failed = path.join(data, 'failed');
    // The note goes in first, then the file.
    await waitUntil(
      () => fs.existsSync(path.join(failed, 'monday.csv')),
      20_000,
      'monday.csv in failed/',
      () => daemon!.output(),
    );
    const note = fs.readFileSync(path.join(failed, 'monday.error.txt'), 'utf8');
    assert.match(
      note,
      /not resumed: it has not moved for 72 h 0 min \(since .*\), longer than SMSDROP_RESUME_WITHIN \(24h\)/,
    );
    assert.match(
      note,
      /Nothing in it was sent\. To send the rest now, drop this same file into inbox\/ again \(not a copy saved again/,
    );
    assert.deepEqual(listDir(failed), ['monday.csv', 'monday.error.txt']);
    await sleep(500);
    assert.equal(sim.records().length, 0, 'nothing sent by surprise');

    fs.renameSync(path.join(failed, 'monday.csv'), path.join(data, 'inbox', 'monday.csv'));
    // Its note still holds the name in failed/, so it is taken under a free one.
    await waitUntil(
      () => fs.existsSync(path.join(data, 'done', 'monday (2).result.csv')),
      20_000,
      'monday (2).csv in done/',
      () => daemon!.output(),
    );
    assertEachOnce(sim.records(), numbersOf(5));
    daemon.kill('SIGTERM');
    assert.equal((await daemon.exited).code, 0, daemon.output());
  });

  it('is not resumed after an account pause that outlasted SMSDROP_RESUME_WITHIN (the same process)', async () => {
    const data = path.join(dir, 'data-paused');
    // Every request of this simulator is answered "balance insufficient": sending pauses at once.
    fs.mkdirSync(path.join(dir, 'broke'));
    const broke = await startSimulatorProcess(path.join(dir, 'broke'), [
      '--faults',
      'status=111142@/1',
    ]);
    try {
      daemon = await start({
        dataDir: data,
        simulator: broke,
        env: { SMSDROP_PAUSE_COOLDOWN_MS: '1500' },
      });
      fs.writeFileSync(path.join(data, 'inbox', 'promo.csv'), contactsCsv(3, { from: 200 }));
      await daemon.waitFor(/sending paused for the account: E_PROVIDER_BALANCE: 111142/);
      ageFile(data, 2); // the account stayed broke for two days
      const failed = path.join(data, 'failed');
      await waitUntil(
        () => fs.existsSync(path.join(failed, 'promo.csv')),
        20_000,
        'promo.csv in failed/',
        () => daemon!.output(),
      );
      assert.match(
        fs.readFileSync(path.join(failed, 'promo.error.txt'), 'utf8'),
        /not resumed: it has not moved for 48 h 0 min/,
      );
      assert.equal(broke.records().length, 0);
      // Dropped again while the account is still broke: that taking is its new start, so the
      // cooldowns after it resume it (paused again), and it is not held a second time.
      fs.renameSync(path.join(failed, 'promo.csv'), path.join(data, 'inbox', 'promo.csv'));
      await daemon.waitFor(/taken promo\.csv as promo \(2\)\.csv/);
      const cooldowns = (daemon.output().match(/cooldown over/g) ?? []).length;
      await waitUntil(
        () => (daemon!.output().match(/cooldown over/g) ?? []).length >= cooldowns + 2,
        20_000,
        'two more cooldowns',
        () => daemon!.output(),
      );
      assert.deepEqual(
        listDir(path.join(data, 'processing')),
        ['promo (2).csv'],
        'still waiting for the account, not held',
      );
      assert.doesNotMatch(daemon.output(), /failed promo \(2\)\.csv/);
      daemon.kill('SIGTERM');
      assert.equal((await daemon.exited).code, 0, daemon.output());
    } finally {
      await broke.stop();
    }
  });

  it('resumes it as before with SMSDROP_RESUME_WITHIN=off', async () => {
    const data = path.join(dir, 'data-off');
    const csv = contactsCsv(4, { from: 100 });
    await leaveInProcessing(data, 'old.csv', csv);
    ageFile(data, 3);
    daemon = await start({ dataDir: data, simulator: sim, env: { SMSDROP_RESUME_WITHIN: 'off' } });
    await waitUntil(
      () => fs.existsSync(path.join(data, 'done', 'old.result.csv')),
      20_000,
      'old.csv in done/',
      () => daemon!.output(),
    );
    assertEachOnce(
      sim.records().filter((r) => r.to.some((n) => n.startsWith('138000001'))),
      numbersOf(4, 100),
    );
    daemon.kill('SIGTERM');
    assert.equal((await daemon.exited).code, 0, daemon.output());
  });
});
