// `smsdrop backup DIR` while the daemon sends a large file: the copy opens and passes SQLite's
// integrity check, and a daemon started on a data directory restored from it finishes the file
// with each number accepted once. The first daemon is killed after the copy, having sent more
// meanwhile: the restored journal resends those batches under their reqIds, and the simulator
// (its own process, with its reqId memory) refuses them as repeats (160054).
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { after, describe, it } from 'node:test';
import {
  assertEachOnce,
  daemonEnv,
  listDir,
  numbersOf,
  type Proc,
  type Simulator,
  startDaemon,
  startProcess,
  startSimulatorProcess,
  tempDir,
  waitUntil,
} from '../daemon/helpers.js';
import { withSqliteFile } from '../sqliteFile.js';

const dirs: string[] = [];
const procs: Proc[] = [];
const sims: Simulator[] = [];
after(async () => {
  for (const p of procs) p.kill('SIGKILL');
  for (const s of sims) await s.stop();
  for (const dir of dirs) fs.rmSync(dir, { recursive: true, force: true });
});

/** One message to `rows` numbers: requests of 50 numbers each. */
function oneMessageCsv(rows: number): string {
  return `phone,template,data1,data2\n${numbersOf(rows)
    .map((n) => `${n},1,code,5`)
    .join('\n')}\n`;
}

const ROWS = 20_000;
/**
 * Slow enough that the copy is taken mid-send and 10 more requests follow it: 400 requests of 50
 * numbers at 10 a second leave the copy (seconds on a loaded machine) half a minute and more.
 */
const PACE = {
  SMSDROP_MAX_PER_REQUEST: '50',
  SMSDROP_REQUESTS_PER_SECOND: '10',
  SMSDROP_CONCURRENCY: '4',
};
/** The restored run has nothing to race: it sends the rest at four times the pace. */
const RESTORED_PACE = { ...PACE, SMSDROP_REQUESTS_PER_SECOND: '40' };

describe('smsdrop backup', () => {
  it('copies the journal mid-send; a run restored from the copy sends each remaining number once', async () => {
    const dir = tempDir('backup');
    dirs.push(dir);
    const sim = await startSimulatorProcess(dir);
    sims.push(sim);
    const first = path.join(dir, 'first');
    const daemon = await startDaemon({ dataDir: first, simulator: sim, env: PACE });
    procs.push(daemon);
    const csv = oneMessageCsv(ROWS);
    fs.writeFileSync(path.join(first, 'inbox', 'big.csv'), csv);
    await waitUntil(
      () => fs.existsSync(sim.recordFile) && sim.records().length >= 20,
      60_000,
      '20 requests accepted',
    );

    const copyDir = path.join(dir, 'copy');
    const backup = startProcess(['backup', copyDir], daemonEnv({ dataDir: first, simulator: sim }));
    const { code } = await backup.exited;
    assert.equal(code, 0, backup.output());
    assert.match(backup.output(), /^copied .* \(integrity check ok\)\n$/);
    // The daemon goes on after the copy: what it sends now the copy does not know.
    const atCopy = sim.records().length;
    await waitUntil(
      () => sim.records().length >= atCopy + 10,
      60_000,
      '10 more requests after the copy',
    );
    daemon.kill('SIGKILL');
    await daemon.exited;
    assert.ok(sim.records().length * 50 < ROWS, 'killed before the file was sent');

    assert.deepEqual(listDir(copyDir), ['journal.intents.sqlite', 'journal.sqlite']);
    withSqliteFile(copyDir, (copy) => {
      assert.equal(copy.pragma('integrity_check', { simple: true }), 'ok');
      assert.equal(
        copy.prepare("SELECT status FROM files WHERE name = 'big.csv'").pluck().get(),
        'sending',
      );
    });

    // Restore: the copy's two files into a data directory, and the same CSV dropped again.
    const second = path.join(dir, 'second');
    fs.mkdirSync(second);
    for (const name of listDir(copyDir))
      fs.copyFileSync(path.join(copyDir, name), path.join(second, name));
    const restored = await startDaemon({ dataDir: second, simulator: sim, env: RESTORED_PACE });
    procs.push(restored);
    fs.writeFileSync(path.join(second, 'inbox', 'big.csv'), csv);
    await waitUntil(
      () => fs.existsSync(path.join(second, 'done', 'big.result.csv')),
      120_000,
      'big.csv done',
      () => restored.output(),
    );
    restored.kill('SIGTERM');
    await restored.exited;

    assertEachOnce(sim.records(), numbersOf(ROWS));
    const repeats = withSqliteFile(
      second,
      (journal) =>
        journal
          .prepare("SELECT count(*) FROM attempts WHERE status_code = '160054'")
          .pluck()
          .get() as number,
    );
    assert.ok(
      repeats > 0,
      'batches the first daemon sent after the copy were sent again and refused as repeats',
    );
  });
});
