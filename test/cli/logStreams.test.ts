// Log lines on the terminal by the usual convention: info and debug on stdout, warnings and errors
// on stderr, so that pm2's error log (and a shell's 2>) holds only what went wrong. `--json` keeps
// stdout for its summary alone.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import { CLI, cleanEnv, contactsCsv, REPO, tempDir, waitUntil } from '../daemon/helpers.js';

/** `smsdrop ARGS` as a child process, its two streams kept apart. */
function start(args: string[], env: NodeJS.ProcessEnv) {
  const child = spawn(process.execPath, ['--import', 'tsx', CLI, ...args], {
    cwd: REPO,
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const out = { stdout: '', stderr: '' };
  child.stdout.on('data', (d: Buffer) => (out.stdout += d.toString()));
  child.stderr.on('data', (d: Buffer) => (out.stderr += d.toString()));
  const exited = new Promise<number | null>((resolve) => child.once('close', resolve));
  return { child, out, exited };
}

/** The levels of the readable log lines in text ("2026-01-01T08:00:00.123Z info taken …"). */
function levels(text: string): Set<string> {
  const found = text.split('\n').map((line) => /^\S+ (debug|info|warn|error) /.exec(line)?.[1]);
  return new Set(found.filter((level) => level !== undefined));
}

describe('log lines on stdout and stderr', () => {
  it('the daemon: info on stdout (watching inbox/), a warning on stderr (the built-in simulator)', async () => {
    const data = path.join(tempDir('log-streams'), 'data');
    const daemon = start(['run'], cleanEnv({ SMSDROP_DATA_DIR: data, SMSDROP_LOG_LEVEL: 'info' }));
    try {
      const both = () => `stdout:\n${daemon.out.stdout}\nstderr:\n${daemon.out.stderr}`;
      await waitUntil(
        () =>
          /info watching /.test(daemon.out.stdout) &&
          /warn .*BUILT-IN SIMULATOR/.test(daemon.out.stderr),
        30_000,
        'the info line on stdout and the warning on stderr',
        both,
      );
      fs.writeFileSync(path.join(data, 'inbox', 'list.csv'), contactsCsv(2));
      fs.writeFileSync(path.join(data, 'inbox', 'notes.pdf'), 'not a list\n');
      await waitUntil(
        () =>
          /info .*list\.csv/.test(daemon.out.stdout) &&
          /warn .*notes\.pdf.*E_FILE_NOT_CSV/.test(daemon.out.stderr),
        30_000,
        'the file taken on stdout, the file refused on stderr',
        both,
      );
      daemon.child.kill('SIGTERM');
      assert.equal(await daemon.exited, 0, both());
      assert.deepEqual([...levels(daemon.out.stdout)], ['info'], both());
      assert.deepEqual([...levels(daemon.out.stderr)], ['warn'], both());
    } finally {
      daemon.child.kill('SIGKILL');
    }
  });

  it('send --json: stdout holds the summary alone, every log line goes to stderr', async () => {
    const dir = tempDir('log-streams-json');
    const file = path.join(dir, 'list.csv');
    fs.writeFileSync(file, contactsCsv(2));
    const env = cleanEnv({ SMSDROP_DATA_DIR: path.join(dir, 'data'), SMSDROP_LOG_LEVEL: 'debug' });
    const send = start(['send', file, '--json'], env);
    assert.equal(await send.exited, 0, send.out.stderr);
    const lines = send.out.stdout.trim().split('\n');
    assert.equal(lines.length, 1, send.out.stdout);
    assert.equal((JSON.parse(lines[0]!) as { status: string }).status, 'done');
    assert.ok(levels(send.out.stderr).has('info'), send.out.stderr);
  });
});
