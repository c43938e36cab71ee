// A fresh clone starts without a warning: the repository ships no data/ folder (git would make it
// with the clone's umask, open to others), so smsdrop makes it on first use, closed to others, and
// says nothing; the warning stays for a data directory that others can really read.
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import { CLI, daemonEnv, REPO, tempDir, waitUntil } from '../daemon/helpers.js';

const TSX = import.meta.resolve('tsx');

/** `smsdrop ARGS` under umask 022 (a usual login shell's); its output, both streams together. */
function startUnder022(args: string[], env: NodeJS.ProcessEnv) {
  const child = spawn(
    'sh',
    ['-c', 'umask 022; exec "$0" --import "$@"', process.execPath, TSX, CLI, ...args],
    { cwd: REPO, env, stdio: ['ignore', 'pipe', 'pipe'], timeout: 120_000, killSignal: 'SIGKILL' },
  );
  let output = '';
  child.stdout.on('data', (d: Buffer) => (output += d.toString()));
  child.stderr.on('data', (d: Buffer) => (output += d.toString()));
  const exited = new Promise<number | null>((resolve) => child.once('close', resolve));
  return { child, output: () => output, exited };
}

describe('a fresh clone and its data directory', () => {
  it(
    'the repository tracks nothing under data/, so a clone has no data/ folder',
    { skip: !fs.existsSync(path.join(REPO, '.git')) },
    () => {
      const tracked = spawnSync('git', ['ls-files', '--', 'data'], { cwd: REPO, encoding: 'utf8' });
      assert.equal(tracked.status, 0, tracked.stderr);
      assert.equal(tracked.stdout, '');
    },
  );

  it('the daemon makes the data directory closed to others and says nothing of it; opened, it warns', async () => {
    const data = path.join(tempDir('fresh-data'), 'data');
    const env = daemonEnv({ dataDir: data });
    const daemon = startUnder022(['run'], env);
    try {
      await waitUntil(
        () => /watching .*inbox/.test(daemon.output()),
        30_000,
        'the daemon',
        daemon.output,
      );
    } finally {
      daemon.child.kill('SIGTERM');
    }
    assert.equal(await daemon.exited, 0, daemon.output());
    assert.doesNotMatch(daemon.output(), /E_DATA_DIR_OPEN/);
    assert.equal(fs.statSync(data).mode & 0o777, 0o700);
    const again = startUnder022(['status'], env);
    assert.equal(await again.exited, 0, again.output());
    assert.doesNotMatch(again.output(), /E_DATA_DIR_OPEN/);

    fs.chmodSync(data, 0o755); // others may list it and reach the journal
    const opened = startUnder022(['status'], env);
    assert.equal(await opened.exited, 0, opened.output());
    assert.match(
      opened.output(),
      /warn E_DATA_DIR_OPEN: other users of this machine may read .*chmod -R go-rwx/,
    );
  });
});
