// A file the daemon may not read (dropped with the wrong owner or mode) is a bad file like any
// other: it goes to failed/ with a note that names it and says why (EACCES), nothing of it is
// sent, and the daemon goes on with the next file. File modes do not stop root, so when the tests
// run as root the daemon runs as the unprivileged user `nobody` (65534), and as the test's own
// user otherwise.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import {
  assertEachOnce,
  CLI,
  cleanEnv,
  contactsCsv,
  listDir,
  numbersOf,
  type Proc,
  REPO,
  type Simulator,
  startDaemon,
  startSimulatorProcess,
  tempDir,
  waitUntil,
} from './helpers.js';

const NOBODY = { uid: 65534, gid: 65534 };
const isRoot = process.getuid?.() === 0;

/**
 * Why the daemon cannot be run as `nobody` here (the repository unreadable to it, say), if it
 * cannot.
 */
function cannotRunAsNobody(home: string): string | undefined {
  const probe = spawnSync(process.execPath, ['--import', 'tsx', CLI, '--help'], {
    cwd: REPO,
    env: cleanEnv({ HOME: home }),
    encoding: 'utf8',
    ...NOBODY,
  });
  if (probe.status === 0) return undefined;
  const lines = (probe.error?.message ?? probe.stderr).trim().split('\n');
  // Node's stack print starts with where it failed; the line with the error says why (EACCES, say).
  const why = lines.find((line) => /Error|EACCES|EPERM/.test(line)) ?? lines[0];
  return `the tests run as root and user 65534 cannot run the CLI from ${REPO} (a folder it may not read?): ${why?.trim()}`;
}

describe('smsdrop run: a file it may not read', () => {
  let dir: string;
  let data: string;
  let sim: Simulator;
  let daemon: Proc | undefined;
  let skipReason: string | undefined;
  const folder = (name: string) => path.join(data, name);

  before(async () => {
    dir = tempDir('daemon-unreadable');
    fs.chmodSync(dir, 0o755); // mkdtemp's 0700 would keep `nobody` out of its own data directory
    data = path.join(dir, 'data');
    fs.mkdirSync(data);
    if (isRoot) {
      skipReason = cannotRunAsNobody(dir);
      if (skipReason) return;
      fs.chownSync(data, NOBODY.uid, NOBODY.gid);
    }
    sim = await startSimulatorProcess(dir, ['--latency-ms', '0-3']);
    daemon = await startDaemon({
      dataDir: data,
      simulator: sim,
      env: { HOME: dir },
      ...(isRoot ? { user: NOBODY } : {}),
    });
  });

  after(async () => {
    daemon?.kill('SIGKILL');
    await daemon?.exited;
    await sim?.stop();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('moves it to failed/ with a note naming it and EACCES, sends none of it, and sends the next file', async (t) => {
    if (skipReason) return t.skip(skipReason);
    // Mode 0o000: chokidar skips, unless told otherwise, a file whose owner may not read it.
    const unreadable = ['locked'];
    fs.writeFileSync(path.join(folder('inbox'), 'locked.csv'), contactsCsv(3, { from: 0 }), {
      mode: 0o000,
    });
    if (isRoot) {
      // Another user's private file (root's, 0o600): its owner may read it, the daemon may not.
      unreadable.push('theirs');
      fs.writeFileSync(path.join(folder('inbox'), 'theirs.csv'), contactsCsv(3, { from: 50 }), {
        mode: 0o600,
      });
    }
    fs.writeFileSync(path.join(folder('inbox'), 'open.csv'), contactsCsv(4, { from: 100 }));
    const wanted: [string, string[]][] = [
      ['failed', unreadable.flatMap((stem) => [`${stem}.csv`, `${stem}.error.txt`])],
      ['done', ['open.csv', 'open.result.csv']],
    ];
    await waitUntil(
      () =>
        wanted.every(([where, names]) =>
          names.every((n) => fs.existsSync(path.join(folder(where), n))),
        ),
      20_000,
      'locked.csv in failed/ and open.csv in done/',
      () =>
        `failed: ${listDir(folder('failed')).join(' ')}; done: ${listDir(folder('done')).join(' ')}\n${daemon!.output()}`,
    );
    for (const stem of unreadable) {
      const note = fs.readFileSync(path.join(folder('failed'), `${stem}.error.txt`), 'utf8');
      assert.match(note, new RegExp(`${stem}\\.csv: cannot read the file: EACCES`));
      assert.match(note, /Nothing in it was sent/);
      assert.match(daemon!.output(), new RegExp(`failed ${stem}\\.csv: .*EACCES`));
    }
    // open.csv's numbers once each, none of the others'
    assertEachOnce(sim.records(), numbersOf(4, 100));
    assert.equal(daemon!.child.exitCode, null, 'the daemon is still running');
    daemon!.kill('SIGTERM');
    assert.equal((await daemon!.exited).code, 0, daemon!.output());
  });
});
