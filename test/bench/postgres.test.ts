// `npm run bench -- --database postgres` must not rot: a tiny run end to end (from source, no
// build) prints one JSON object with every figure and every node run right (no timing asserted);
// and a bench killed with SIGKILL mid-run leaves nothing running: not PostgreSQL, not a node, not
// the simulator.
import assert from 'node:assert/strict';
import { type ChildProcess, spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { after, describe, test } from 'node:test';
import type { PostgresBenchResult } from '../../bench/postgres.js';
import { postgresMissing } from '../pg/cluster.js';

const BENCH = path.resolve('bench/bench.ts');

/**
 * A folder of its own for a bench run, open to other users: as root, the cluster runs as the
 * postgres user, who must reach its folder inside (mkdtemp makes 0700).
 */
function folder(parent: string, prefix: string): string {
  const dir = fs.mkdtempSync(path.join(parent, prefix));
  fs.chmodSync(dir, 0o755);
  return dir;
}

/** The bench with its own TMPDIR, so that whatever it starts can be found by that folder. */
function startBench(args: string[], tmp: string): ChildProcess {
  return spawn(process.execPath, ['--import', 'tsx', BENCH, ...args], {
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, TMPDIR: tmp },
  });
}

function outputOf(child: ChildProcess): { stdout: () => string; stderr: () => string } {
  let stdout = '';
  let stderr = '';
  child.stdout!.on('data', (d) => (stdout += d));
  child.stderr!.on('data', (d) => (stderr += d));
  return { stdout: () => stdout, stderr: () => stderr };
}

const closed = (child: ChildProcess) =>
  new Promise<number | null>((resolve) => child.once('close', (code) => resolve(code)));

/** Processes whose command line or environment names `dir` (all of the bench's children do). */
function processesUnder(dir: string): string[] {
  const found: string[] = [];
  for (const pid of fs.readdirSync('/proc').filter((p) => /^\d+$/.test(p))) {
    if (Number(pid) === process.pid) continue;
    try {
      const cmd = fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8');
      const env = fs.readFileSync(`/proc/${pid}/environ`, 'utf8');
      if (cmd.includes(dir) || env.includes(`TMPDIR=${dir}`))
        found.push(`${pid} ${cmd.replaceAll('\0', ' ')}`); // whole: the command ends the line
    } catch {
      // gone, or not ours to read
    }
  }
  return found;
}

describe('bench --database postgres', { skip: postgresMissing() }, () => {
  const tmp = folder(os.tmpdir(), 'bench-pg-');
  after(() => fs.rmSync(tmp, { recursive: true, force: true }));
  const tiny = [
    ...['--database', 'postgres', '--rows', '1500', '--send-rows', '400', '--large-rows', '3000'],
    ...['--cli', 'src'],
  ];
  /** The series at a long latency: not in these runs (seconds a run). */
  const noSlow = ['--slow-latency-ms', '0'];

  test('a tiny run prints every figure, each node run sending exactly the files', async () => {
    const child = startBench(
      [...tiny, '--nodes', '2', '--concurrency', '3', '--repeat', '1', '--json', ...noSlow],
      folder(tmp, 'run-'),
    );
    const out = outputOf(child);
    assert.equal(await closed(child), 0, out.stderr());
    const lines = out.stdout().trim().split('\n');
    assert.equal(lines.length, 1, 'stdout holds only the JSON object');
    const r = JSON.parse(lines[0]!) as PostgresBenchResult;
    for (const rate of [r.intake.sqlite, r.intake.postgres]) {
      assert.equal(rate.rows, 1500);
      assert.ok(rate.rowsPerSec > 0 && rate.load.length === 2);
    }
    assert.equal(r.networkLimitRequestsPerSec, 60, '3 requests at once, 50 ms each');
    assert.deepEqual(
      r.nodeRuns.map((run) => [run.journal, run.nodes]),
      [
        ['sqlite', 1],
        ['postgres', 1],
        ['postgres', 2],
      ],
      'one node on SQLite (the reference), then 1 and 2 on PostgreSQL',
    );
    for (const run of r.nodeRuns) {
      assert.ok(run.ok, run.problems.join('; '));
      assert.equal(run.requests, run.expectedRequests);
      assert.equal(run.simulatorRequests, run.requests, 'every request reached the simulator once');
      assert.equal(run.accepted, run.expectedAccepted);
      assert.ok(run.peakInFlight! >= 1 && run.peakInFlight! <= 3, `peak ${run.peakInFlight}`);
      assert.ok(run.requestsPerSec > 0 && run.sendingSeconds > 0 && run.e2eSeconds > 0);
      assert.ok(run.meanRequestMs >= 50, `${run.meanRequestMs} ms a request, 50 ms of latency`);
    }
    assert.equal(r.slow, null);
    assert.deepEqual(
      r.targets.map((t) => t.goal),
      ['>= 0.7', '>= 0.9', '>= 0.95', '<= 2'],
      "intake and 1 node judged against SQLite's, 2 nodes against 1 node's, the small file's start",
    );
    assert.equal(r.smallFileWait.smallRows, 100);
    assert.equal(r.smallFileWait.largeRows, 3000);
    assert.ok(r.smallFileWait.secondsToFirstRequest !== null, 'the small file was sent');
  });

  test('killed with SIGKILL while nodes run, it leaves no process behind', async () => {
    const dir = folder(tmp, 'kill-');
    // A second an answer: a node runs for seconds, not the moment a loaded machine's look misses.
    const child = startBench(
      [
        ...tiny,
        '--nodes',
        '1',
        '--repeat',
        '1',
        '--timeout-s',
        '60',
        '--latency-ms',
        '1000',
        ...noSlow,
      ],
      dir,
    );
    const out = outputOf(child);
    const ended = closed(child);
    // Until a node runs: a process besides PostgreSQL's whose command line says `run`.
    const deadline = Date.now() + 240_000;
    while (!processesUnder(dir).some((p) => / run\s*$/.test(p))) {
      assert.ok(Date.now() < deadline, `no node started:\n${out.stderr()}`);
      assert.equal(child.exitCode, null, `the bench ended first:\n${out.stderr()}`);
      await sleep(100);
    }
    assert.ok(
      processesUnder(dir).some((p) => p.includes('postgres')),
      'PostgreSQL runs',
    );
    child.kill('SIGKILL');
    await ended;
    let left = processesUnder(dir);
    for (let i = 0; i < 300 && left.length > 0; i++) {
      await sleep(100);
      left = processesUnder(dir);
    }
    assert.deepEqual(left, [], 'processes left running after the bench died');
  });
});
