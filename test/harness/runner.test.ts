// The test runner (scripts/run-tests.mjs) on test files made to misbehave
// (test/fixtures/harness/): a process a test file leaves behind dies when the file ends, however
// it ends, and a file that never ends is stopped and reported.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { waitUntil } from '../daemon/helpers.js';

const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const FIXTURES = path.join('test', 'fixtures', 'harness');

interface RunnerResult {
  status: number | null;
  output: string;
}

function runTests(args: string[], env: Record<string, string> = {}): Promise<RunnerResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['scripts/run-tests.mjs', '--dir', FIXTURES, ...args], {
      cwd: REPO,
      env: { ...process.env, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (d: Buffer) => (output += d.toString()));
    child.stderr.on('data', (d: Buffer) => (output += d.toString()));
    child.on('error', reject);
    // 'exit': a process left behind would hold the pipes, and 'close' would wait for it.
    child.on('exit', (status) => resolve({ status, output }));
  });
}

/** Alive and not a zombie (a killed process whose parent is gone may wait to be reaped). */
function running(pid: number): boolean {
  try {
    return !/^\d+ \(.*\) Z/.test(readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return false;
  }
}

describe('the test runner', () => {
  for (const how of ['fail', 'killed', 'detached']) {
    it(`kills what a test file left running when the file ends (${how})`, async () => {
      const pidFile = path.join(mkdtempSync(path.join(os.tmpdir(), 'harness-')), 'pid');
      // Its test ended, but the process it left running keeps the file alive: the file's limit
      // stops it (a short one here).
      const r = await runTests(['leaves-child', '--file-timeout', '10'], {
        HARNESS_LEAVE: how,
        HARNESS_PID_FILE: pidFile,
      });
      assert.equal(r.status, how === 'detached' ? 0 : 1, r.output);
      const pid = Number(readFileSync(pidFile, 'utf8'));
      assert.ok(pid > 0);
      try {
        await waitUntil(
          () => !running(pid),
          5_000,
          `process ${pid} to be gone`,
          () => r.output,
        );
      } finally {
        if (running(pid)) process.kill(pid, 'SIGKILL');
      }
    });
  }

  it('stops a file that runs past --file-timeout and reports it', async () => {
    const started = Date.now();
    const r = await runTests(['hangs', '--file-timeout', '3']);
    assert.equal(r.status, 1, r.output);
    assert.match(r.output, /hangs\.test\.ts: TIMED OUT: still running after 3 s, stopped/);
    assert.match(r.output, /✖ test\/fixtures\/harness\/hangs\.test\.ts: TIMED OUT/);
    // The plain closing line counts the stopped file as a failure, though no test of it failed.
    assert.match(r.output, /^tests: 0 passed, 1 failed, 0 skipped$/m);
    assert.ok(Date.now() - started < 60_000, 'stopped near its limit, not at the end of time');
  });

  it("prints every test's count, its output far larger than a pipe holds", async () => {
    const r = await runTests(['loud']);
    const end = r.output.slice(-2_000);
    assert.equal(r.status, 0, end);
    assert.match(end, /^tests: 20 passed, 0 failed, 0 skipped$/m);
  });

  it('is the one time limit: no suite or test of test/ sets a timeout of its own', () => {
    // A loaded machine reaches any fixed limit of a suite; the runner's per-file limit is generous.
    const own: string[] = [];
    const walk = (dir: string): void => {
      for (const entry of readdirSync(dir, { withFileTypes: true })) {
        const file = path.join(dir, entry.name);
        if (entry.isDirectory()) walk(file);
        else if (entry.name.endsWith('.test.ts'))
          readFileSync(file, 'utf8')
            .split('\n')
            .forEach((line, i) => {
              if (
                /\b(describe|it|test|suite)\(.*\{ timeout: /.test(line) ||
                /^\s*\{ timeout: [\d_]+ \},?$/.test(line)
              )
                own.push(`${path.relative(REPO, file)}:${i + 1}`);
            });
      }
    };
    walk(path.join(REPO, 'test'));
    assert.deepEqual(own, []);
  });
});
