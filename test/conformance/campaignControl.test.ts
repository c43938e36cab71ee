// An operator's control of a file on each journal, through the real daemon and the real CLI as
// child processes against the real simulator: with SMSDROP_APPROVAL=on a dropped file sends
// nothing until `smsdrop approve` (now, or --at a time), `pause` holds every request that had not
// started when it returned until `resume`, and `cancel` ends a file in flight with its unsent rows
// cancelled in the result file, the report, the export and the views.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, it } from 'node:test';
import { smsdrop, type Run } from '../cli/helpers.js';
import {
  acceptedPerNumber,
  assertEachOnce,
  CREDENTIALS,
  contactsCsv,
  numbersOf,
  type Proc,
  resultRows,
  type Simulator,
  startDaemon,
  startSimulatorProcess,
  tempDir,
  waitUntil,
} from '../daemon/helpers.js';
import { attemptStarts, journalRows } from './controlJournal.js';
import { onEachJournal } from './journals.js';

/** Generous for a loaded machine: every wait is for a condition, never a duration. */
const LONG = 120_000;

/** The one line a refused command prints, and its exit status. */
function assertRefused(run: Run, what: string): void {
  assert.equal(run.status, 2, `${what}: exit 2\n${run.stdout}${run.stderr}`);
  assert.match(run.stderr, /^smsdrop: E_CONTROL_REFUSED: [^\n]+\n$/, what);
}

interface StatusFile {
  name: string;
  status: string;
  start_at: string | null;
  preview?: { rows: number; numbers: number; requests: number };
}

onEachJournal('campaign control with the daemon', ({ environment }) => {
  let work: string;
  let sim: Simulator;
  let daemon: Proc;
  let env: Record<string, string>;
  const inbox = (name: string) => path.join(env.SMSDROP_DATA_DIR!, 'inbox', name);
  const done = (name: string) => path.join(env.SMSDROP_DATA_DIR!, 'done', name);
  const cli = (...args: string[]) => smsdrop(args, env);
  const statusOf = async (name: string): Promise<{ now: string; file?: StatusFile }> => {
    const run = await cli('status', '--json');
    assert.equal(run.status, 0, run.stderr);
    const status = JSON.parse(run.stdout) as { now: string; files: StatusFile[] };
    return { now: status.now, file: status.files.find((f) => f.name === name) };
  };
  /** How many numbers of `numbers` the simulator accepted. */
  const acceptedOf = (numbers: string[]) => {
    const counts = acceptedPerNumber(sim.records());
    return numbers.filter((n) => counts.has(n)).length;
  };
  const recordsOf = (numbers: string[]) =>
    sim.records().filter((r) => r.to.some((to) => numbers.includes(to)));

  before(async () => {
    work = tempDir('campaign-control');
    // slow enough that a command lands while a 40-row file is being sent, one number a request
    sim = await startSimulatorProcess(work, ['--latency-ms', '400']);
    env = {
      ...CREDENTIALS,
      ...(await environment()),
      SMSDROP_BASE_URL: sim.url,
      SMSDROP_DATA_DIR: path.join(work, 'data'),
      SMSDROP_MAX_PER_REQUEST: '1',
      SMSDROP_CONCURRENCY: '1',
      SMSDROP_APPROVAL: 'on',
    };
    daemon = await startDaemon({ dataDir: env.SMSDROP_DATA_DIR!, simulator: sim, env });
  });

  after(async () => {
    daemon?.kill('SIGKILL');
    await daemon?.exited;
    await sim?.stop();
    fs.rmSync(work, { recursive: true, force: true });
  });

  it('holds a dropped file, with its preview, until approve; then sends each number once', async () => {
    const numbers = numbersOf(5);
    fs.writeFileSync(inbox('held.csv'), contactsCsv(5));
    await daemon.waitFor(/held\.csv: held for approval/, LONG);
    assert.equal(sim.records().length, 0, 'the simulator got no request');
    assert.deepEqual(await attemptStarts(env, 'held.csv'), [], 'no request started');

    const shown = await cli('status');
    assert.equal(shown.status, 0, shown.stderr);
    assert.match(shown.stdout, /held\.csv \(id \d+\) is held for approval: smsdrop approve/);
    assert.match(shown.stdout, /5 numbers to send in 5 requests/, 'its preview');
    const { file } = await statusOf('held.csv');
    assert.equal(file?.status, 'held');
    assert.deepEqual(
      [file?.preview?.rows, file?.preview?.numbers, file?.preview?.requests],
      [5, 5, 5],
    );

    assertRefused(await cli('pause', 'held.csv'), 'a held file is not paused');
    assertRefused(await cli('resume', 'held.csv'), 'a held file is approved, not resumed');
    assert.equal(sim.records().length, 0, 'still nothing sent');

    const approved = await cli('approve', 'held.csv');
    assert.equal(approved.status, 0, approved.stderr);
    assert.match(approved.stdout, /held\.csv \(id \d+\): approved/);
    await waitUntil(
      () => fs.existsSync(done('held.result.csv')) && fs.existsSync(done('held.csv')),
      LONG,
      'the file and its result file in done/',
      daemon.output,
    );
    assert.deepEqual(
      resultRows(done('held.result.csv')).map((r) => r.status),
      Array(5).fill('accepted'),
    );
    assertEachOnce(sim.records(), numbers);
    assertRefused(await cli('approve', 'held.csv'), 'a done file');
  });

  it('starts a file approved --at a time then, not before, and shows it scheduled meanwhile', async () => {
    const numbers = numbersOf(5, 100);
    fs.writeFileSync(inbox('later.csv'), contactsCsv(5, { from: 100 }));
    await daemon.waitFor(/later\.csv: held for approval/, LONG);
    const at = new Date(Date.now() + 10_000);
    const approved = await cli('approve', 'later.csv', '--at', at.toISOString());
    assert.equal(approved.status, 0, approved.stderr);
    assert.match(approved.stdout, /later\.csv \(id \d+\): scheduled: it starts at /);
    const status = await statusOf('later.csv');
    const shown = await cli('status');
    if (Date.now() < at.getTime()) {
      assert.match(shown.stdout, /^sending +waiting for an operator: later\.csv scheduled$/m);
      assert.match(shown.stdout, /later\.csv \(id \d+\) is scheduled: it starts at /);
      assert.doesNotMatch(shown.stdout, /stopped/);
    }
    if (Date.parse(status.now) < at.getTime()) {
      assert.equal(status.file?.status, 'scheduled', 'before its time');
      assert.equal(Date.parse(status.file?.start_at ?? ''), at.getTime());
    }
    await waitUntil(() => fs.existsSync(done('later.result.csv')), LONG, 'done/', daemon.output);
    const starts = await attemptStarts(env, 'later.csv');
    assert.equal(starts.length, 5);
    for (const start of starts) assert.ok(start >= at.getTime(), 'no request before its time');
    for (const r of recordsOf(numbers)) assert.ok(Date.parse(r.time) >= at.getTime());
    assert.equal(acceptedOf(numbers), 5);
  });

  it('holds a file from the moment pause returns until resume, which finishes it, each once', async () => {
    const numbers = numbersOf(40, 200);
    fs.writeFileSync(inbox('big.csv'), contactsCsv(40, { from: 200 }));
    await daemon.waitFor(/big\.csv: held for approval/, LONG);
    assert.equal((await cli('approve', 'big.csv')).status, 0);
    await waitUntil(() => acceptedOf(numbers) >= 3, LONG, 'a few requests', daemon.output);
    const paused = await cli('pause', 'big.csv');
    const pausedAt = Date.now();
    assert.equal(paused.status, 0, paused.stderr);
    assert.match(paused.stdout, /big\.csv \(id \d+\): paused/);
    await daemon.waitFor(/big\.csv: paused by an operator/, LONG);
    assert.equal((await statusOf('big.csv')).file?.status, 'paused');
    const shown = await cli('status');
    assert.match(shown.stdout, /^sending +waiting for an operator: big\.csv paused$/m);
    assert.match(shown.stdout, /big\.csv \(id \d+\) is paused by an operator: smsdrop resume/);
    assert.doesNotMatch(shown.stdout, /stopped/);
    const before = await attemptStarts(env, 'big.csv');
    assert.ok(before.length < 40, 'rows are left for resume');
    for (const start of before) assert.ok(start <= pausedAt, 'no request started after pause');
    assert.equal((await cli('pause', 'big.csv')).stdout.includes('already paused'), true);

    const resumed = await cli('resume', 'big.csv');
    assert.equal(resumed.status, 0, `${resumed.stdout}${resumed.stderr}`);
    assert.match(resumed.stderr + resumed.stdout, /resumed: the daemon goes on with it/);
    await waitUntil(() => fs.existsSync(done('big.result.csv')), LONG, 'done/', daemon.output);
    assert.deepEqual(
      resultRows(done('big.result.csv')).map((r) => r.status),
      Array(40).fill('accepted'),
    );
    assert.equal(acceptedOf(numbers), 40);
    const counts = acceptedPerNumber(sim.records());
    assert.deepEqual(
      numbers.filter((n) => counts.get(n) !== 1),
      [],
      'each number once',
    );
  });

  it('cancels a file in flight: its unsent rows end cancelled everywhere, the sent ones accepted', async () => {
    const numbers = numbersOf(40, 300);
    fs.writeFileSync(inbox('gone.csv'), contactsCsv(40, { from: 300 }));
    await daemon.waitFor(/gone\.csv: held for approval/, LONG);
    assert.equal((await cli('approve', 'gone.csv')).status, 0);
    await waitUntil(() => acceptedOf(numbers) >= 3, LONG, 'a few requests', daemon.output);
    const cancelled = await cli('cancel', 'gone.csv');
    const cancelledAt = Date.now();
    assert.equal(cancelled.status, 0, cancelled.stderr);
    assert.match(cancelled.stdout, /gone\.csv \(id \d+\): cancelled: .*\(\d+ row\(s\) cancelled\)/);
    await waitUntil(() => fs.existsSync(done('gone.result.csv')), LONG, 'done/', daemon.output);
    for (const start of await attemptStarts(env, 'gone.csv'))
      assert.ok(start <= cancelledAt, 'no request started after cancel');

    const rows = resultRows(done('gone.result.csv'));
    const accepted = rows.filter((r) => r.status === 'accepted').map((r) => r.phone);
    const dropped = rows.filter((r) => r.status === 'cancelled').map((r) => r.phone);
    assert.equal(
      accepted.length + dropped.length,
      40,
      `every row accepted or cancelled: ${JSON.stringify(rows.filter((r) => r.status !== 'accepted' && r.status !== 'cancelled'))}`,
    );
    assert.ok(dropped.length > 0 && accepted.length >= 3);
    const counts = acceptedPerNumber(sim.records());
    assert.deepEqual(
      accepted.filter((n) => counts.get(n!) !== 1),
      [],
      'the accepted rows sent once',
    );
    assert.deepEqual(
      dropped.filter((n) => counts.has(n!)),
      [],
      'no cancelled row was sent',
    );
    assert.equal(acceptedOf(numbers), accepted.length);

    const report = await cli('report', 'gone.csv', '--format', 'json');
    assert.equal(report.status, 0, report.stderr);
    const reported = JSON.parse(report.stdout) as Record<string, number>;
    assert.deepEqual(
      [reported.accepted, reported.cancelled, reported.pending],
      [accepted.length, dropped.length, 0],
    );
    const table = await cli('report', 'gone.csv');
    assert.match(table.stdout, new RegExp(`cancelled\\s+${dropped.length}\\b`));
    const out = path.join(work, 'gone.export.csv');
    const exported = await cli('export', 'gone.csv', '--out', out);
    assert.equal(exported.status, 0, exported.stderr);
    assert.equal(
      resultRows(out).filter((r) => r.status === 'cancelled').length,
      dropped.length,
      'export',
    );
    const [line] = await journalRows<{ cancelled: number | string; control: string }>(
      env,
      "SELECT cancelled, control FROM v_files WHERE name = 'gone.csv'",
    );
    assert.deepEqual([Number(line!.cancelled), line!.control], [dropped.length, 'cancelled']);
    const [rowsCancelled] = await journalRows<{ n: number | string }>(
      env,
      "SELECT count(*) AS n FROM v_recipients WHERE file_name = 'gone.csv' AND status = 'cancelled'",
    );
    assert.equal(Number(rowsCancelled!.n), dropped.length, 'v_recipients');

    assertRefused(await cli('pause', 'gone.csv'), 'a cancelled file that is done');
    assertRefused(await cli('cancel', 'gone.csv'), 'a done file');
    const retry = await cli('retry', 'gone.csv', '--failed', '--unknown');
    assert.equal(retry.status, 0, `retry leaves cancelled rows alone\n${retry.stdout}`);
    assert.equal(acceptedOf(numbers), accepted.length, 'nothing more sent');
  });
});
