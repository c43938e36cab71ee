#!/usr/bin/env node
// Runs the test suite with the node test runner, one test file per process group, two files at a
// time. Node 20 does not expand globs in `--test` arguments, so this collects test/**/*.test.ts
// itself. Arguments narrow the run to files whose path contains one of them:
// `npm test -- daemon intake`. Options: `--dir DIR` collects from DIR instead of test/;
// `--file-timeout SECONDS` (default 1200, or SMSDROP_TEST_FILE_TIMEOUT_S) is how long one file may
// run before it is stopped and reported as timed out. It leaves room for test/dayChange.ts: a test
// that needs one provider day waits out a day change, up to 11 minutes (its minute and the
// product's 5-minute margins, at midnight in Shanghai or in the host's zone). At 600 s, a CI run
// that crossed midnight UTC stopped a file in the middle of that wait.
//
// Nothing a test file starts outlives it, whatever happens to the file (a failed test, a timeout
// in a test, a hung child holding its pipes, the file killed): when the file's process ends, or
// its time is up, every process of its process group is killed, and so is every process whose
// TMPDIR is the file's own (see below), which catches those that left the group (pm2's daemon).
//
// The tests make their folders (journals, data directories, CSV files: ~2 GB over a whole run)
// under os.tmpdir(). This points TMPDIR, for each file and every process it starts, at a folder
// of the file's own inside this run's, removed when every test passed and kept, with its path
// printed, when one failed (the journals and logs of a failure are worth reading).
import { spawn } from 'node:child_process';
import {
  appendFileSync,
  chmodSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
} from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';

const CONCURRENCY = 2;

function collect(dir) {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) return entry.name === 'fixtures' ? [] : collect(full);
    return entry.name.endsWith('.test.ts') ? [full] : [];
  });
}

/** SIGKILL to every process of a group; a group whose processes are all gone is no error. */
function killGroup(pgid) {
  try {
    process.kill(-pgid, 'SIGKILL');
  } catch {
    // ESRCH: nothing left in it
  }
}

/**
 * SIGKILL to every process started with TMPDIR inside `dir` (Linux: /proc/PID/environ is the
 * environment a process started with). A process that left the file's group (setsid, a daemon
 * such as pm2's) still carries the TMPDIR it inherited.
 */
function killTagged(dir) {
  let pids;
  try {
    pids = readdirSync('/proc').filter((name) => /^\d+$/.test(name));
  } catch {
    return; // no /proc: the process group is all there is
  }
  for (const pid of pids) {
    if (Number(pid) === process.pid) continue;
    try {
      const tmpdir = readFileSync(`/proc/${pid}/environ`, 'latin1')
        .split('\0')
        .find((entry) => entry.startsWith('TMPDIR='))
        ?.slice('TMPDIR='.length);
      if (tmpdir === dir || tmpdir?.startsWith(dir + path.sep))
        process.kill(Number(pid), 'SIGKILL');
    } catch {
      // gone meanwhile, or another user's process we may not read (then not one of ours)
    }
  }
}

// Without the test runner's mark of its own child processes: a file started by this runner run
// from inside a test (test/harness/) is a test file of its own, not a part of that test.
const fileEnv = { ...process.env };
delete fileEnv.NODE_TEST_CONTEXT;
delete fileEnv.SMSDROP_TEST_TOTALS; // the counts of this run only, not of runs its tests start

const running = new Map(); // pgid -> the file's TMPDIR

function killEverything() {
  for (const [pgid, dir] of running) {
    killGroup(pgid);
    killTagged(dir);
  }
}

/** Tests passed, failed, ... as the spec reporter counts them at the end of a file. */
function counts(output) {
  const found = {};
  for (const [, name, n] of output.matchAll(/^ℹ (tests|pass|fail|cancelled|skipped|todo) (\d+)$/gm))
    found[name] = (found[name] ?? 0) + Number(n);
  return found;
}

/** Runs one test file in a process group of its own; resolves when all of it is dead. */
function runFile(file, tmp, limitMs) {
  const dir = path.join(tmp, file.replaceAll(path.sep, '_'));
  mkdirSync(dir);
  chmodSync(dir, 0o1777); // as /tmp: some tests run the daemon as another user
  const started = Date.now();
  const child = spawn(
    process.execPath,
    // Not --test-force-exit: it can end a file before all its tests ran, or report fewer than ran,
    // and still exit 0 (nodejs/node#54327). A file something keeps alive is stopped by the
    // watchdog below instead, and fails.
    ['--import', 'tsx', '--test', '--test-reporter=spec', file],
    { detached: true, stdio: ['ignore', 'pipe', 'pipe'], env: { ...fileEnv, TMPDIR: dir } },
  );
  running.set(child.pid, dir);
  let output = '';
  child.stdout.on('data', (d) => (output += d));
  child.stderr.on('data', (d) => (output += d));
  let timedOut = false;
  const watchdog = setTimeout(() => {
    timedOut = true;
    killGroup(child.pid);
  }, limitMs);
  // The pipes may still hold the file's last output (its counts) when it exits: read to their end,
  // which comes once everything holding them is killed; a bound, should something else hold them.
  const drained = Promise.all(
    [child.stdout, child.stderr].map((stream) => new Promise((done) => stream.once('close', done))),
  );
  return new Promise((resolve) => {
    // 'exit', not 'close': a process left behind may hold the pipes open for ever.
    child.once('exit', (code, signal) => {
      clearTimeout(watchdog);
      killGroup(child.pid);
      killTagged(dir);
      running.delete(child.pid);
      const seconds = (Date.now() - started) / 1000;
      const bound = new Promise((done) => setTimeout(done, 5_000).unref());
      void Promise.race([drained, bound]).then(() =>
        resolve({ file, code, signal, timedOut, seconds, output, dir }),
      );
    });
  });
}

function describeResult(r, limitMs) {
  if (r.timedOut) return `TIMED OUT: still running after ${limitMs / 1000} s, stopped`;
  if (r.code === 0) return `passed in ${r.seconds.toFixed(1)} s`;
  const how = r.signal ? `killed by ${r.signal}` : `exit code ${r.code}`;
  return `FAILED (${how}) in ${r.seconds.toFixed(1)} s`;
}

async function runAll(files, tmp, limitMs) {
  const queue = [...files];
  const results = [];
  const worker = async () => {
    for (let file = queue.shift(); file !== undefined; file = queue.shift()) {
      const r = await runFile(file, tmp, limitMs);
      process.stdout.write(`\n▶ ${r.file}: ${describeResult(r, limitMs)}\n${r.output}`);
      results.push(r);
    }
  };
  await Promise.all(Array.from({ length: CONCURRENCY }, worker));
  return results;
}

function summarise(results, limitMs, seconds) {
  const total = {};
  for (const r of results)
    for (const [name, n] of Object.entries(counts(r.output))) total[name] = (total[name] ?? 0) + n;
  const bad = results.filter((r) => r.timedOut || r.code !== 0);
  console.log(
    `\n${results.length} test files in ${seconds.toFixed(0)} s: ${results.length - bad.length} passed` +
      `; tests: ${Object.entries(total)
        .map(([name, n]) => `${name} ${n}`)
        .join(', ')}`,
  );
  for (const r of bad) console.log(`✖ ${r.file}: ${describeResult(r, limitMs)}`);
  // A file that failed without a failed test (timed out, killed, crashed) counts as one failure.
  const unexplained = bad.filter((r) => {
    const own = counts(r.output);
    return (own.fail ?? 0) + (own.cancelled ?? 0) === 0;
  }).length;
  const failed = (total.fail ?? 0) + (total.cancelled ?? 0) + unexplained;
  // The plain closing line CI services read: passed, failed and skipped tests over every file.
  console.log(`tests: ${total.pass ?? 0} passed, ${failed} failed, ${total.skipped ?? 0} skipped`);
  // .ci/run adds up the runs on each Node line from this file.
  if (process.env.SMSDROP_TEST_TOTALS)
    appendFileSync(
      process.env.SMSDROP_TEST_TOTALS,
      `${JSON.stringify({ passed: total.pass ?? 0, failed, skipped: total.skipped ?? 0 })}\n`,
    );
  return bad.length === 0;
}

function main() {
  const { values, positionals } = parseArgs({
    options: {
      dir: { type: 'string', default: 'test' },
      'file-timeout': {
        type: 'string',
        default: process.env.SMSDROP_TEST_FILE_TIMEOUT_S ?? '1200',
      },
    },
    allowPositionals: true,
  });
  const limitMs = Number(values['file-timeout']) * 1000;
  if (!(limitMs > 0))
    throw new Error(`--file-timeout: expected seconds, got ${values['file-timeout']}`);
  const files = collect(values.dir)
    .filter((file) => positionals.length === 0 || positionals.some((f) => file.includes(f)))
    .sort();
  if (files.length === 0) {
    console.error(`no test files match ${positionals.join(' ')}`);
    process.exit(1);
  }
  const tmp = mkdtempSync(path.join(os.tmpdir(), 'smsdrop-tests-'));
  chmodSync(tmp, 0o1777);
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'])
    process.once(signal, () => {
      killEverything();
      console.error(`\n${signal}: stopped; test folders kept in ${tmp}`);
      process.exit(1);
    });
  process.once('exit', killEverything);
  const started = Date.now();
  void runAll(files, tmp, limitMs).then((results) => {
    const passed = summarise(results, limitMs, (Date.now() - started) / 1000);
    if (passed) rmSync(tmp, { recursive: true, force: true });
    else console.error(`test folders kept in ${tmp}`);
    // Written to a pipe (CI), stdout is asynchronous: exit once what was written has gone out, or
    // the last lines (the closing counts) would be lost.
    process.stdout.write('', () => process.exit(passed ? 0 : 1));
  });
}

main();
