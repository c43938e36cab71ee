// smsdrop end to end on each journal: the real CLI as child processes, the real simulator with
// faults, and every valid number accepted exactly once (the simulator's record) through a send
// stopped midway and resumed, the same list sent again, an export, a retry with nothing to resend,
// and a prune.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { after, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { smsdrop } from '../cli/helpers.js';
import {
  acceptedPerNumber,
  assertEachOnce,
  cleanEnv,
  CREDENTIALS,
  contactsCsv,
  numbersOf,
  type Proc,
  startProcess,
  startSimulatorProcess,
  tempDir,
  waitUntil,
} from '../daemon/helpers.js';
import { clearOfDayChange } from '../dayChange.js';
import { onEachJournal } from './journals.js';

const ROWS = 240;
/** Faults that each request may meet: every one is retried, none leaves a number in doubt. */
const FAULTS = ['--faults', 'http500@0.1,status=160000@0.05', '--seed', '47', '--latency-ms', '20'];

onEachJournal('smsdrop end to end', ({ environment }) => {
  const running: Proc[] = [];
  const dirs: string[] = [];
  after(async () => {
    for (const p of running) p.kill('SIGKILL');
    await Promise.all(running.map((p) => p.exited));
    for (const d of dirs) fs.rmSync(d, { recursive: true, force: true });
  });

  it('sends a list once through a stop and a resume, and never again; export, retry and prune read it', async () => {
    const work = tempDir('conformance-e2e');
    dirs.push(work);
    const sim = await startSimulatorProcess(work, FAULTS);
    after(() => sim.stop());
    const env = {
      ...CREDENTIALS,
      ...(await environment()),
      SMSDROP_BASE_URL: sim.url,
      SMSDROP_DATA_DIR: path.join(work, 'data'),
      SMSDROP_MAX_PER_REQUEST: '5',
      SMSDROP_CONCURRENCY: '2',
    };
    const csv = path.join(work, 'contacts.csv');
    fs.writeFileSync(csv, contactsCsv(ROWS, { bad: 2 }));

    // The stopped send's requests in doubt are resent under their reqIds on their own day only:
    // the send, its stop and its resume all inside one provider day.
    await clearOfDayChange(120_000);
    const send = startProcess(['send', csv], cleanEnv(env));
    running.push(send);
    await waitUntil(
      () => sim.records().length > 0,
      60_000,
      'a first request accepted',
      send.output,
    );
    send.kill('SIGTERM');
    const stopped = await send.exited;
    assert.notEqual(stopped.code, 0, `stopped midway:\n${send.output()}`);
    assert.ok(acceptedPerNumber(sim.records()).size < ROWS, 'some numbers were left for resume');

    const resumed = await smsdrop(['resume', 'contacts.csv'], env);
    assert.equal(resumed.status, 3, `two invalid rows: exit 3\n${resumed.stderr}`);
    assertEachOnce(sim.records(), numbersOf(ROWS));

    const again = await smsdrop(['send', csv], env);
    assert.equal(again.status, 3, again.stderr);
    assertEachOnce(sim.records(), numbersOf(ROWS));

    const report = await smsdrop(['report', 'contacts.csv', '--format', 'json'], env);
    assert.equal(report.status, 0, report.stderr);
    const counts = JSON.parse(report.stdout) as Record<string, number>;
    assert.deepEqual(
      [counts.rows, counts.accepted, counts.invalid, counts.pending],
      [ROWS + 2, ROWS, 2, 0],
    );

    const out = path.join(work, 'export.csv');
    const exported = await smsdrop(['export', 'contacts.csv', '--out', out], env);
    assert.equal(exported.status, 0, exported.stderr);
    const lines = fs.readFileSync(out, 'utf8').trim().split(/\r?\n/);
    assert.equal(lines.length, ROWS + 3, 'a header and every row');

    const retried = await smsdrop(['retry', 'contacts.csv', '--failed'], env);
    assert.equal(retried.status, 0, `nothing to resend\n${retried.stdout}${retried.stderr}`);
    assertEachOnce(sim.records(), numbersOf(ROWS));

    await sleep(1_100); // the file ended over a second ago
    const noWindows = { ...env, SMSDROP_REPEAT_WINDOW: 'off', SMSDROP_RESUME_WITHIN: 'off' };
    const pruned = await smsdrop(['prune', '--older-than', '1s', '--json'], noWindows);
    assert.equal(pruned.status, 0, pruned.stderr);
    assert.match(pruned.stdout, /contacts\.csv/, 'the file was pruned');
    const afterPrune = await smsdrop(['report', 'contacts.csv', '--format', 'json'], env);
    const kept = JSON.parse(afterPrune.stdout) as Record<string, number>;
    assert.equal(kept.accepted, ROWS, 'a pruned file keeps its counts');
  });
});
