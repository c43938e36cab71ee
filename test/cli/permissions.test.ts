// Phone numbers on disk are readable only by whom the operator chooses (issue 37): whatever the
// umask smsdrop is started with (022, the usual one, or 002), nothing it creates under the data
// directory grants anything to other users after `send`, `run` (a file taken and finished, a
// duplicate, a file that is not CSV), `export`, `backup` and `prune`; with
// SMSDROP_SHARE_WITH_GROUP=on its group reads and nothing more. A data directory others may read
// is said once at start with the command that closes it, or refused (SMSDROP_STRICT_PERMISSIONS).
// The real CLI and daemon run as child processes under `sh -c 'umask U; exec node ...'`.
import assert from 'node:assert/strict';
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import {
  CLI,
  cleanEnv,
  contactsCsv,
  daemonEnv,
  REPO,
  type Simulator,
  startSimulatorProcess,
  tempDir,
  waitUntil,
} from '../daemon/helpers.js';

interface Run {
  status: number | null;
  output: string;
  stderr: string;
}

const started = new Set<ChildProcess>();
after(() => {
  for (const child of started)
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
});

/** tsx by its file, so that a process started in another folder (`export`'s) finds it. */
const TSX = import.meta.resolve('tsx');

/** `smsdrop ARGS` started with the given umask (octal text, as sh's `umask` takes it). */
function startUnder(
  umask: string,
  args: string[],
  env: NodeJS.ProcessEnv,
  cwd = REPO,
  user?: { uid: number; gid: number },
) {
  const child: ChildProcess = spawn(
    'sh',
    ['-c', `umask ${umask}; exec "$0" --import "$@"`, process.execPath, TSX, CLI, ...args],
    // Never outlives its test, even one that failed waiting for it.
    {
      cwd,
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
      timeout: 120_000,
      killSignal: 'SIGKILL',
      ...user,
    },
  );
  started.add(child);
  let output = '';
  let stderr = '';
  child.stdout!.on('data', (d: Buffer) => (output += d.toString()));
  child.stderr!.on('data', (d: Buffer) => {
    output += d.toString();
    stderr += d.toString();
  });
  const exited = new Promise<Run>((resolve) =>
    child.once('exit', (status) => resolve({ status, output, stderr })),
  );
  return { child, exited, output: () => output };
}

function runUnder(umask: string, args: string[], env: NodeJS.ProcessEnv, cwd = REPO) {
  return startUnder(umask, args, env, cwd).exited;
}

/** Every folder and file under `root` (itself included), with its permission bits. */
function walk(root: string): { path: string; mode: number }[] {
  const found = [{ path: root, mode: fs.lstatSync(root).mode & 0o7777 }];
  for (const entry of fs.readdirSync(root, { withFileTypes: true })) {
    const full = path.join(root, entry.name);
    if (entry.isDirectory()) found.push(...walk(full));
    else found.push({ path: full, mode: fs.lstatSync(full).mode & 0o7777 });
  }
  return found;
}

/** The entries that grant anything to others, shown as `MODE path`: none expected. */
function openToOthers(root: string): string[] {
  return walk(root)
    .filter((e) => (e.mode & 0o007) !== 0)
    .map((e) => `${e.mode.toString(8)} ${path.relative(path.dirname(root), e.path)}`);
}

function assertHas(root: string, names: string[]): void {
  const present = new Set(walk(root).map((e) => path.relative(root, e.path)));
  const missing = names.filter((n) => !present.has(n));
  assert.deepEqual(missing, [], `expected under ${root}: ${[...present].sort().join(' ')}`);
}

for (const umask of ['022', '002']) {
  describe(`with the umask at ${umask}`, () => {
    let dir: string;
    let data: string;
    let work: string;
    let sim: Simulator;
    let env: NodeJS.ProcessEnv;

    before(async () => {
      dir = tempDir(`perms-${umask}`);
      data = path.join(dir, 'data');
      work = path.join(dir, 'work');
      fs.mkdirSync(work, { mode: 0o755 });
      sim = await startSimulatorProcess(dir, ['--latency-ms', '0-3']);
      env = daemonEnv({ dataDir: data, simulator: sim });
    });

    after(async () => {
      await sim?.stop();
      fs.rmSync(dir, { recursive: true, force: true });
    });

    it('send: the data directory, journal, logs and the result files next to FILE', async () => {
      const list = path.join(work, 'list.csv');
      fs.writeFileSync(list, contactsCsv(5, { bad: 1 }), { mode: 0o644 });
      const sent = await runUnder(umask, ['send', list], env);
      assert.equal(sent.status, 3, sent.output);
      assertHas(data, ['journal.sqlite', 'journal.intents.sqlite', 'logs', 'spool']);
      assert.deepEqual(openToOthers(data), []);
      for (const name of ['list.result.csv', 'list.rejected.csv']) {
        const mode = fs.statSync(path.join(work, name)).mode & 0o777;
        assert.equal(mode & 0o077, 0, `${name}: ${mode.toString(8)}`);
      }
    });

    it('run: a dropped file taken and finished, a duplicate, a file refused', async () => {
      const daemon = startUnder(umask, ['run'], env);
      try {
        await waitUntil(() => /watching .*inbox/.test(daemon.output()), 30_000, 'the daemon');
        const inbox = path.join(data, 'inbox');
        fs.writeFileSync(path.join(inbox, 'drop.csv'), contactsCsv(4, { from: 100 }), {
          mode: 0o644,
        });
        fs.copyFileSync(path.join(work, 'list.csv'), path.join(inbox, 'again.csv'));
        fs.writeFileSync(path.join(inbox, 'notes.pdf'), 'not a list\n', { mode: 0o644 });
        const expected = [
          'done/drop.csv',
          'done/drop.result.csv',
          'done/again.csv',
          'done/again.duplicate.txt',
          'failed/notes.pdf',
          'failed/notes.pdf.error.txt',
        ];
        await waitUntil(
          () => expected.every((f) => fs.existsSync(path.join(data, f))),
          60_000,
          expected.join(', '),
          daemon.output,
        );
      } finally {
        daemon.child.kill('SIGTERM');
      }
      assert.equal((await daemon.exited).status, 0, daemon.output());
      assertHas(data, ['inbox', 'processing', 'done/drop.csv', 'failed/notes.pdf']);
      assert.deepEqual(openToOthers(data), []);
    });

    it('export (to the current folder by default) and backup', async () => {
      const exported = await runUnder(umask, ['export', 'drop.csv'], env, data);
      assert.equal(exported.status, 0, exported.output);
      const backup = await runUnder(umask, ['backup', path.join(data, 'backups')], env);
      assert.equal(backup.status, 0, backup.output);
      assertHas(data, ['drop.export.csv', 'backups/journal.sqlite']);
      assert.deepEqual(openToOthers(data), []);
    });

    it('prune', async () => {
      // Every file ended more than a second ago: pruned, their files in done/ and failed/ too.
      await new Promise((resolve) => setTimeout(resolve, 1_500));
      const pruneEnv = { ...env, SMSDROP_REPEAT_WINDOW: 'off', SMSDROP_RESUME_WITHIN: 'off' };
      const pruned = await runUnder(umask, ['prune', '--older-than', '1s'], pruneEnv);
      assert.equal(pruned.status, 0, pruned.output);
      assert.equal(fs.existsSync(path.join(data, 'done', 'drop.result.csv')), false, 'pruned');
      assertHas(data, ['journal.sqlite', 'logs']);
      assert.deepEqual(openToOthers(data), []);
    });
  });
}

describe('SMSDROP_SHARE_WITH_GROUP=on', () => {
  let dir: string;
  let sim: Simulator;
  before(async () => {
    dir = tempDir('perms-group');
    sim = await startSimulatorProcess(dir, ['--latency-ms', '0-3']);
  });
  after(async () => {
    await sim?.stop();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('the group reads what smsdrop writes, and writes nothing; others get nothing', async () => {
    const data = path.join(dir, 'data');
    const list = path.join(dir, 'list.csv');
    fs.writeFileSync(list, contactsCsv(3));
    const env = daemonEnv({
      dataDir: data,
      simulator: sim,
      env: { SMSDROP_SHARE_WITH_GROUP: 'on' },
    });
    const sent = await runUnder('002', ['send', list], env);
    assert.equal(sent.status, 0, sent.output);
    const modes = walk(data).filter((e) => (e.mode & 0o027) !== 0);
    assert.deepEqual(modes, [], 'nothing writable by the group or open to others');
    assert.equal(fs.statSync(path.join(data, 'journal.sqlite')).mode & 0o777, 0o640);
    assert.equal(fs.statSync(data).mode & 0o777, 0o750);
    assert.equal(fs.statSync(path.join(dir, 'list.result.csv')).mode & 0o777, 0o640);
  });
});

describe('a data directory others may read', () => {
  let dir: string;
  before(() => {
    dir = tempDir('perms-open');
  });
  after(() => fs.rmSync(dir, { recursive: true, force: true }));

  function openDataDir(name: string): string {
    const data = path.join(dir, name);
    fs.mkdirSync(data, { mode: 0o755 });
    fs.chmodSync(data, 0o755);
    fs.writeFileSync(path.join(data, 'journal.sqlite'), '', { mode: 0o644 });
    fs.chmodSync(path.join(data, 'journal.sqlite'), 0o644);
    return data;
  }

  it('is said once, with the command that closes it; after it, nothing is said', async () => {
    const data = openDataDir('warned');
    const env = daemonEnv({ dataDir: data });
    const first = await runUnder('022', ['status'], env);
    const lines = first.stderr.split('\n').filter((l) => l.includes('E_DATA_DIR_OPEN'));
    assert.equal(lines.length, 1, first.output);
    assert.match(lines[0]!, /warn/);
    assert.match(lines[0]!, /journal\.sqlite/);
    const fix = /`(chmod -R go-rwx [^`]+)`/.exec(lines[0]!)?.[1];
    assert.ok(fix, lines[0]);
    assert.equal(spawnSync('sh', ['-c', fix]).status, 0);
    const second = await runUnder('022', ['status'], env);
    assert.doesNotMatch(second.output, /E_DATA_DIR_OPEN/);
  });

  it('is not said of a data directory that is a file: that is another error', async () => {
    const file = path.join(dir, 'a-file');
    fs.writeFileSync(file, 'x', { mode: 0o644 });
    fs.chmodSync(file, 0o644);
    const run = await runUnder('022', ['run'], daemonEnv({ dataDir: file }));
    assert.equal(run.status, 2, run.output);
    assert.match(run.stderr, /^smsdrop: E_DATA_DIR_NOT_A_DIRECTORY: .*\n$/);
  });

  it('is said once by the daemon, which goes on', async () => {
    const data = openDataDir('daemon');
    const daemon = startUnder('022', ['run'], daemonEnv({ dataDir: data }));
    try {
      await waitUntil(() => /watching .*inbox/.test(daemon.output()), 30_000, 'the daemon');
    } finally {
      daemon.child.kill('SIGTERM');
    }
    const run = await daemon.exited;
    assert.equal(run.status, 0, run.output);
    const lines = run.output.split('\n').filter((line) => line.includes('E_DATA_DIR_OPEN'));
    assert.equal(lines.length, 1, run.output);
    // What it made is closed all the same.
    assert.equal(fs.statSync(path.join(data, 'inbox')).mode & 0o077, 0);
  });

  it('is refused with SMSDROP_STRICT_PERMISSIONS=on: exit 2, one line with its code', async () => {
    const data = openDataDir('strict');
    const env = daemonEnv({ dataDir: data, env: { SMSDROP_STRICT_PERMISSIONS: 'on' } });
    for (const args of [['run'], ['status']]) {
      const refused = await runUnder('022', args, env);
      assert.equal(refused.status, 2, refused.output);
      assert.match(refused.stderr, /^smsdrop: E_DATA_DIR_OPEN: .*chmod -R go-rwx .*\n$/);
      assert.equal(refused.stderr.trim().split('\n').length, 1, refused.stderr);
    }
    assert.equal(fs.existsSync(path.join(data, 'inbox')), false, 'nothing made');
  });
});

const isRoot = process.getuid?.() === 0;
/** The daemon's user, and an account in the drop group only (ids no one else on the box uses). */
const DAEMON = { uid: 65534, gid: 65534 };
const DROPPER = { uid: 65532, gid: 65533 };

/** What `sh -c SCRIPT` does as the dropper: its status (0: allowed). */
function asDropper(script: string, input?: string): number | null {
  return spawnSync('sh', ['-c', script], { ...DROPPER, ...(input ? { input } : {}) }).status;
}

describe('another account drops files into inbox/ and reads nothing', () => {
  let dir: string;
  let data: string;
  let sim: Simulator;
  let skip: string | undefined;

  before(async () => {
    dir = tempDir('perms-drop');
    fs.chmodSync(dir, 0o755); // mkdtemp's 0700 would keep both accounts out
    data = path.join(dir, 'data');
    if (!isRoot) return void (skip = 'needs root: it runs the daemon and a dropper as two users');
    const probe = spawnSync(process.execPath, ['--import', TSX, CLI, '--help'], {
      cwd: REPO,
      env: cleanEnv({ HOME: dir }),
      ...DAEMON,
    });
    if (probe.status !== 0) return void (skip = `user 65534 cannot run the CLI from ${REPO}`);
    // What docs/operations.md tells the operator to do, the data directory first:
    fs.mkdirSync(data, { mode: 0o710 });
    fs.chmodSync(data, 0o710);
    fs.chownSync(data, DAEMON.uid, DROPPER.gid);
    sim = await startSimulatorProcess(dir, ['--latency-ms', '0-3']);
  });

  after(async () => {
    await sim?.stop();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('through a group-writable, setgid, sticky inbox/', async (t) => {
    if (skip) return t.skip(skip);
    const env = daemonEnv({ dataDir: data, simulator: sim, env: { HOME: dir } });
    const daemon = startUnder('022', ['run'], env, REPO, DAEMON);
    const inbox = path.join(data, 'inbox');
    try {
      await waitUntil(() => /watching .*inbox/.test(daemon.output()), 30_000, 'the daemon');
      // ... then the inbox the daemon made (0700): the drop group may add files, not list them.
      fs.chownSync(inbox, DAEMON.uid, DROPPER.gid);
      fs.chmodSync(inbox, 0o3730);
      const dropped = path.join(inbox, 'from-alice.csv');
      assert.equal(asDropper(`umask 022; cat > '${dropped}'`, contactsCsv(3, { from: 300 })), 0);
      assert.notEqual(asDropper(`ls '${inbox}'`), 0, 'the dropper lists inbox/');
      const result = path.join(data, 'done', 'from-alice.result.csv');
      await waitUntil(() => fs.existsSync(result), 60_000, 'the result', daemon.output);
      for (const file of [result, path.join(data, 'journal.sqlite')])
        assert.notEqual(asDropper(`cat '${file}' > /dev/null`), 0, `the dropper reads ${file}`);
      assert.notEqual(asDropper(`ls '${data}'`), 0, 'the dropper lists the data directory');
    } finally {
      daemon.child.kill('SIGTERM');
    }
    assert.equal((await daemon.exited).status, 0, daemon.output());
    assert.equal(fs.statSync(inbox).mode & 0o7777, 0o3730, 'inbox/ as the operator left it');
    // The dropped file stays its dropper's, with its dropper's mode (smsdrop may not change it):
    // done/ around it keeps everyone else out. Everything smsdrop made grants nothing to others.
    const taken = path.join(data, 'done', 'from-alice.csv');
    assert.equal(fs.statSync(taken).uid, DROPPER.uid);
    assert.equal(fs.statSync(path.dirname(taken)).mode & 0o077, 0);
    assert.deepEqual(openToOthers(data), ['644 data/done/from-alice.csv']);
  });
});
