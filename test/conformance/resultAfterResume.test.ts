// `resume` and `retry` write the file's result file again where `send` or the daemon put it, on
// each journal: the real CLI and daemon as child processes, the real simulator. Left alone, the
// result file beside a stopped `send` kept saying its rows were pending after `resume` sent them.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { after, it } from 'node:test';
import { smsdrop } from '../cli/helpers.js';
import {
  CREDENTIALS,
  contactsCsv,
  listDir,
  type Proc,
  resultRows,
  startDaemon,
  startSimulatorProcess,
  tempDir,
  waitUntil,
} from '../daemon/helpers.js';
import { onEachJournal } from './journals.js';
import { stopSendMidway } from './stoppedSend.js';

const ROWS = 120;

/** Each status of a result file, with how many rows have it. */
function statusesOf(file: string): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const row of resultRows(file)) counts[row.status!] = (counts[row.status!] ?? 0) + 1;
  return counts;
}

onEachJournal('the result file after resume and retry', ({ environment }) => {
  const running: Proc[] = [];
  const dirs: string[] = [];
  after(async () => {
    for (const p of running) p.kill('SIGKILL');
    await Promise.all(running.map((p) => p.exited));
    for (const d of dirs) fs.rmSync(d, { recursive: true, force: true });
  });

  it('resume writes the stopped send’s result file again beside the file, every row accepted', async () => {
    const { work, env } = await stopSendMidway('result-resume', ROWS, await environment(), {
      running,
      dirs,
    });
    const resultFile = path.join(work, 'contacts.result.csv');
    assert.ok((statusesOf(resultFile).pending ?? 0) > 0, 'the stopped send left rows pending');

    const resumed = await smsdrop(['resume', 'contacts.csv'], env);
    assert.equal(resumed.status, 0, resumed.stdout + resumed.stderr);
    assert.deepEqual(statusesOf(resultFile), { accepted: ROWS });
    assert.match(resumed.stdout, new RegExp(`results +${resultFile.replace(/[.\\]/g, '\\$&')}`));
    assert.deepEqual(
      fs.readdirSync(work).filter((n) => n.includes('.part')),
      [],
      'no partial file left',
    );
  });

  it('retry writes the daemon’s result file in done/ again, and the duplicate drop’s', async () => {
    const work = tempDir('result-retry');
    dirs.push(work);
    const dataDir = path.join(work, 'data');
    // Every second request refused for good (160032: a number over its daily limit): failed rows.
    const failing = await startSimulatorProcess(path.join(work), ['--faults', 'status=160032@/2']);
    const journalEnv = await environment();
    const daemon = await startDaemon({ dataDir, simulator: failing, env: journalEnv });
    running.push(daemon);
    const inbox = path.join(dataDir, 'inbox');
    const done = path.join(dataDir, 'done');
    fs.writeFileSync(path.join(inbox, 'list.csv'), contactsCsv(20));
    await waitUntil(() => listDir(done).includes('list.result.csv'), 60_000, 'list filed');
    // The same bytes again: a duplicate, filed with the results of the first.
    fs.writeFileSync(path.join(inbox, 'list.csv'), contactsCsv(20));
    await waitUntil(() => listDir(done).includes('list (2).result.csv'), 60_000, 'copy filed');
    daemon.kill('SIGTERM');
    await daemon.exited;
    await failing.stop();
    for (const name of ['list.result.csv', 'list (2).result.csv'])
      assert.ok((statusesOf(path.join(done, name)).failed ?? 0) > 0, `${name}: failed rows`);

    const sim = await startSimulatorProcess(path.join(work, 'second'));
    after(() => sim.stop());
    const env = {
      ...CREDENTIALS,
      ...journalEnv,
      SMSDROP_BASE_URL: sim.url,
      SMSDROP_DATA_DIR: dataDir,
    };
    const retried = await smsdrop(['retry', 'list.csv', '--failed'], env);
    assert.equal(retried.status, 0, retried.stdout + retried.stderr);
    for (const name of ['list.result.csv', 'list (2).result.csv'])
      assert.deepEqual(statusesOf(path.join(done, name)), { accepted: 20 }, name);
  });
});
