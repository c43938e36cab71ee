// The Node settings that hold smsdrop's memory reach the process wherever users start it as the
// README says: `npm start`, the `smsdrop` command (package.json's bin) and pm2's
// ecosystem.config.js; and each can be overridden (SMSDROP_NODE_FLAGS, NODE_OPTIONS,
// MALLOC_ARENA_MAX). Read from the running Node's /proc/PID/cmdline and environ.
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { cleanEnv, daemonEnv, REPO, tempDir, waitUntil } from '../daemon/helpers.js';

const FLAGS = ['--max-semi-space-size=8', '--no-concurrent-recompilation'];
const pkg = JSON.parse(fs.readFileSync(path.join(REPO, 'package.json'), 'utf8')) as {
  bin: { smsdrop: string };
  scripts: { start: string };
};

const children = new Set<ChildProcess>();

/** The pids of a process's descendants, from /proc (npm starts a shell, which starts node). */
function descendants(pid: number): number[] {
  const out: number[] = [];
  for (const task of fs.readdirSync(`/proc/${pid}/task`)) {
    const text = fs.readFileSync(`/proc/${pid}/task/${task}/children`, 'utf8').trim();
    for (const child of text ? text.split(' ').map(Number) : [])
      out.push(child, ...descendants(child));
  }
  return out;
}

const cmdline = (pid: number) => fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');
const environ = (pid: number) =>
  Object.fromEntries(
    fs
      .readFileSync(`/proc/${pid}/environ`, 'utf8')
      .split('\0')
      .filter(Boolean)
      .map((e) => [e.slice(0, e.indexOf('=')), e.slice(e.indexOf('=') + 1)]),
  );

interface Started {
  /** Node's own arguments, before the script. */
  nodeArgs: string[];
  env: Record<string, string>;
}

/**
 * Starts `command`, waits for the Node process running smsdrop's CLI (it or a descendant, once it
 * printed `ready`), reads what it was started with, and stops it.
 */
async function started(command: string[], env: NodeJS.ProcessEnv, ready: RegExp): Promise<Started> {
  const child = spawn(command[0]!, command.slice(1), { cwd: REPO, env, stdio: 'pipe' });
  children.add(child);
  let text = '';
  child.stdout.on('data', (d: Buffer) => (text += d.toString()));
  child.stderr.on('data', (d: Buffer) => (text += d.toString()));
  try {
    await waitUntil(
      () => ready.test(text) || child.exitCode !== null,
      60_000,
      `${ready}`,
      () => text,
    );
    assert.match(text, ready);
    const pid = [child.pid!, ...descendants(child.pid!)].find((p) =>
      cmdline(p).some((a) => /cli\.(ts|js)$/.test(a)),
    );
    assert.ok(pid, `no Node process running the CLI under ${command.join(' ')}`);
    const argv = cmdline(pid);
    const script = argv.findIndex((a) => /cli\.(ts|js)$/.test(a));
    const nodeArgs = argv
      .slice(1, script)
      .filter((a, i, all) => a !== '--import' && all[i - 1] !== '--import');
    return { nodeArgs, env: environ(pid) };
  } finally {
    for (const p of descendants(child.pid!).reverse()) process.kill(p, 'SIGTERM');
    child.kill('SIGTERM');
    if (child.exitCode === null) await new Promise((resolve) => child.once('exit', resolve));
  }
}

const bin = path.join(REPO, pkg.bin.smsdrop);
const simulate = [bin, 'simulate', '--port', '0'];
const LISTENING = /listening on /;

describe('the Node settings where users start smsdrop', () => {
  let dir: string;
  before(() => (dir = tempDir('node-flags')));
  after(() => {
    for (const child of children) child.kill('SIGKILL');
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('`npm start` runs the daemon through bin/smsdrop, with the flags and one malloc arena', async () => {
    assert.equal(pkg.scripts.start, `${pkg.bin.smsdrop} run`);
    const env = daemonEnv({ dataDir: path.join(dir, 'data'), env: { SMSDROP_FROM_SOURCE: '1' } });
    const s = await started(['npm', 'start', '--silent'], env, /watching .*inbox/);
    assert.deepEqual(s.nodeArgs, FLAGS);
    assert.equal(s.env.MALLOC_ARENA_MAX, '1');
  });

  it('the smsdrop command gives them to any command', async () => {
    const s = await started(simulate, cleanEnv({ SMSDROP_FROM_SOURCE: '1' }), LISTENING);
    assert.deepEqual(s.nodeArgs, FLAGS);
    assert.equal(s.env.MALLOC_ARENA_MAX, '1');
  });

  it('the smsdrop command keeps the compile cache in node_modules unless one is set', async () => {
    const s = await started(simulate, cleanEnv({ SMSDROP_FROM_SOURCE: '1' }), LISTENING);
    assert.equal(s.env.NODE_COMPILE_CACHE, path.join(REPO, 'node_modules/.cache/smsdrop-node'));
    const own = path.join(dir, 'compile-cache');
    const set = cleanEnv({ SMSDROP_FROM_SOURCE: '1', NODE_COMPILE_CACHE: own });
    assert.equal((await started(simulate, set, LISTENING)).env.NODE_COMPILE_CACHE, own);
  });

  it('SMSDROP_NODE_FLAGS replaces them, and a MALLOC_ARENA_MAX already set is kept', async () => {
    const env = cleanEnv({
      SMSDROP_FROM_SOURCE: '1',
      SMSDROP_NODE_FLAGS: '--max-semi-space-size=4',
      MALLOC_ARENA_MAX: '2',
    });
    const s = await started(simulate, env, LISTENING);
    assert.deepEqual(s.nodeArgs, ['--max-semi-space-size=4']);
    assert.equal(s.env.MALLOC_ARENA_MAX, '2');
    const none = await started(simulate, { ...env, SMSDROP_NODE_FLAGS: '' }, LISTENING);
    assert.deepEqual(none.nodeArgs, []);
  });

  it('a flag NODE_OPTIONS names is left to NODE_OPTIONS', async () => {
    const env = {
      ...cleanEnv({ SMSDROP_FROM_SOURCE: '1' }),
      NODE_OPTIONS: '--max-semi-space-size=16',
    };
    const s = await started(simulate, env, LISTENING);
    assert.deepEqual(s.nodeArgs, ['--no-concurrent-recompilation']);
    assert.equal(s.env.NODE_OPTIONS, '--max-semi-space-size=16');
  });

  it("pm2's ecosystem.config.js starts Node with the same flags and MALLOC_ARENA_MAX", async () => {
    const { apps } = (await import(path.join(REPO, 'ecosystem.config.js'))) as {
      apps: { node_args: string[]; env: Record<string, string> }[];
    };
    assert.deepEqual(apps[0]!.node_args.slice(0, FLAGS.length), FLAGS);
    assert.equal(apps[0]!.env.MALLOC_ARENA_MAX, process.env.MALLOC_ARENA_MAX ?? '1');
  });
});
