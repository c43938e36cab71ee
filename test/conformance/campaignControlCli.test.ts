// An operator's control of a file with no daemon running, on each journal, through the real CLI
// as child processes against the real simulator: `pause` holds a foreground `send` (exit 3) and
// `resume` finishes it in the foreground; `cancel` ends a foreground send or a stopped file with
// its unsent rows cancelled; a plain `retry` leaves them alone and `retry --cancelled` sends them.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, it } from 'node:test';
import { smsdrop, type Run } from '../cli/helpers.js';
import {
  acceptedPerNumber,
  CREDENTIALS,
  cleanEnv,
  contactsCsv,
  numbersOf,
  type Proc,
  type Simulator,
  startProcess,
  startSimulatorProcess,
  tempDir,
  waitUntil,
} from '../daemon/helpers.js';
import { attemptStarts, journalRows } from './controlJournal.js';
import { onEachJournal } from './journals.js';

/** Generous for a loaded machine: every wait is for a condition, never a duration. */
const LONG = 120_000;

function assertRefused(run: Run, what: string): void {
  assert.equal(run.status, 2, `${what}: exit 2\n${run.stdout}${run.stderr}`);
  assert.match(run.stderr, /^smsdrop: E_CONTROL_REFUSED: [^\n]+\n$/, what);
}

onEachJournal('campaign control without a daemon', ({ environment }) => {
  let work: string;
  let sim: Simulator;
  let env: Record<string, string>;
  const running: Proc[] = [];
  const cli = (...args: string[]) => smsdrop(args, env);
  const csv = (name: string, rows: number, from: number) => {
    const file = path.join(work, name);
    fs.writeFileSync(file, contactsCsv(rows, { from }));
    return file;
  };
  /** How many times the simulator accepted each of `numbers`, those it did. */
  const sentOf = (numbers: string[]) => {
    const counts = acceptedPerNumber(sim.records());
    return numbers.filter((n) => counts.has(n)).map((n) => counts.get(n)!);
  };
  const reportOf = async (name: string) => {
    const run = await cli('report', name, '--format', 'json');
    assert.equal(run.status, 0, run.stderr);
    return JSON.parse(run.stdout) as Record<string, number>;
  };
  /** `smsdrop send FILE` in the background, once a few of its requests were accepted. */
  const sendUnderway = async (file: string, numbers: string[]): Promise<Proc> => {
    const send = startProcess(['send', file], cleanEnv(env));
    running.push(send);
    await waitUntil(() => sentOf(numbers).length >= 3, LONG, 'a few requests', send.output);
    return send;
  };

  before(async () => {
    work = tempDir('campaign-control-cli');
    sim = await startSimulatorProcess(work, ['--latency-ms', '400']);
    env = {
      ...CREDENTIALS,
      ...(await environment()),
      SMSDROP_BASE_URL: sim.url,
      SMSDROP_DATA_DIR: path.join(work, 'data'),
      SMSDROP_MAX_PER_REQUEST: '1',
      SMSDROP_CONCURRENCY: '1',
    };
  });

  after(async () => {
    for (const p of running) p.kill('SIGKILL');
    await Promise.all(running.map((p) => p.exited));
    await sim?.stop();
    fs.rmSync(work, { recursive: true, force: true });
  });

  it('pauses a foreground send (exit 3); resume lifts the pause and finishes it, each once', async () => {
    const numbers = numbersOf(30);
    const send = await sendUnderway(csv('paused.csv', 30, 0), numbers);
    const paused = await cli('pause', 'paused.csv');
    const pausedAt = Date.now();
    assert.equal(paused.status, 0, paused.stderr);
    const ended = await send.exited;
    assert.equal(ended.code, 3, `a paused send exits 3\n${send.output()}`);
    assert.match(send.output(), /paused by an operator: nothing more is sent until/);
    const starts = await attemptStarts(env, 'paused.csv');
    assert.ok(starts.length < 30, 'rows are left');
    for (const start of starts) assert.ok(start <= pausedAt, 'no request started after pause');

    const resumed = await cli('resume', 'paused.csv');
    assert.equal(resumed.status, 0, `${resumed.stdout}${resumed.stderr}`);
    assert.deepEqual(sentOf(numbers), Array(30).fill(1), 'each number once');
    const report = await reportOf('paused.csv');
    assert.deepEqual([report.accepted, report.cancelled, report.pending], [30, 0, 0]);
    assertRefused(await cli('pause', 'paused.csv'), 'a done file');
  });

  it('cancels a foreground send: it ends with exit 3 and its unsent rows cancelled', async () => {
    const numbers = numbersOf(30, 100);
    const send = await sendUnderway(csv('dropped.csv', 30, 100), numbers);
    const cancelled = await cli('cancel', 'dropped.csv');
    assert.equal(cancelled.status, 0, cancelled.stderr);
    const ended = await send.exited;
    assert.equal(ended.code, 3, `not every row accepted: exit 3\n${send.output()}`);
    const report = await reportOf('dropped.csv');
    assert.ok(report.cancelled! > 0, 'rows cancelled');
    assert.equal(report.accepted! + report.cancelled!, 30);
    assert.match(send.output(), new RegExp(`cancelled ${report.cancelled}  pending 0`));
    assert.equal(sentOf(numbers).length, report.accepted);
  });

  it('cancels a stopped file; retry leaves its cancelled rows alone, retry --cancelled sends them', async () => {
    const numbers = numbersOf(30, 200);
    const send = await sendUnderway(csv('stopped.csv', 30, 200), numbers);
    send.kill('SIGTERM');
    assert.notEqual((await send.exited).code, 0, send.output());
    const sent = sentOf(numbers).length;
    assert.ok(sent < 30, 'rows are left');

    const cancelled = await cli('cancel', 'stopped.csv', '--json');
    assert.equal(cancelled.status, 0, cancelled.stderr);
    const result = JSON.parse(cancelled.stdout) as { control: string; cancelled: number };
    assert.deepEqual([result.control, result.cancelled], ['cancelled', 30 - sent]);
    const again = await cli('cancel', 'stopped.csv');
    assert.equal(again.status, 0, again.stderr);
    assert.match(again.stdout, /already cancelled; nothing changed/);
    assertRefused(await cli('resume', 'stopped.csv'), 'a cancelled file is not resumed');
    assertRefused(await cli('approve', 'stopped.csv'), 'only a held file is approved');
    let report = await reportOf('stopped.csv');
    assert.deepEqual([report.accepted, report.cancelled, report.pending], [sent, 30 - sent, 0]);

    const plain = await cli('retry', 'stopped.csv', '--failed', '--unknown');
    assert.equal(plain.status, 0, `${plain.stdout}${plain.stderr}`);
    assert.match(plain.stdout, /nothing to resend/);
    assert.equal(sentOf(numbers).length, sent, 'cancelled rows left alone');

    const retried = await cli('retry', 'stopped.csv', '--cancelled');
    assert.equal(retried.status, 0, `${retried.stdout}${retried.stderr}`);
    assert.match(retried.stdout, new RegExp(`${30 - sent} cancelled rows resent, finished`));
    assert.deepEqual(sentOf(numbers), Array(30).fill(1), 'each number once');
    report = await reportOf('stopped.csv');
    assert.deepEqual([report.accepted, report.cancelled, report.pending], [30, 0, 0]);
    const [line] = await journalRows<{ status: string; control: string | null }>(
      env,
      "SELECT status, control FROM v_files WHERE name = 'stopped.csv'",
    );
    assert.deepEqual([line!.status, line!.control], ['done', null]);
    const none = await cli('retry', 'stopped.csv', '--cancelled');
    assert.match(none.stdout, /has no cancelled rows: nothing to resend/);
  });
});
