// A throwaway PostgreSQL cluster for tests: initdb into a temporary folder, the server on a free
// loopback port and a socket folder of its own, stopped and removed by the test file's after hook.
//
// The server is Debian's (`pg_config --bindir`: initdb and postgres are not on PATH). PostgreSQL
// refuses to run as root, and CI runs as root: then the folder is given to the `postgres` user and
// the programs run as that user. Everything runs under setpriv (util-linux), which execs the
// program itself (runuser and su fork and wait), so the server is this process's own child and
// carries a parent-death signal: should the test process die without its after hook (SIGKILL,
// a crash), the kernel sends the server SIGQUIT, PostgreSQL's immediate shutdown, which ends its
// children and removes its System V segment. The test runner kills the file's process group and
// every process with the file's TMPDIR on top of that (scripts/run-tests.mjs).
//
// One cluster per test file (initdb is the slow part, ~1-3 s on two loaded cores) and a fresh
// database per test (`freshDatabase`).
import assert from 'node:assert/strict';
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { after, before } from 'node:test';
import pg from 'pg';

const INITDB_DEADLINE_MS = 120_000;
const READY_DEADLINE_MS = 60_000;
const STOP_DEADLINE_MS = 15_000;
/** Longest path of a Unix socket (sun_path is 108 bytes with its terminating zero). */
const SOCKET_PATH_MAX = 107;

export interface Postgres {
  /** postgres://postgres@127.0.0.1:PORT/postgres: the cluster's first database, as superuser. */
  readonly url: string;
  readonly port: number;
  /** The postmaster's process id. */
  readonly pid: number;
  /** The temporary folder holding data/, the socket and server.log. */
  readonly dir: string;
  /** A new, empty database; its URL. */
  freshDatabase(): Promise<string>;
  /** A pool on `url`, ended by stop() before the server goes. */
  pool(url: string, max?: number): pg.Pool;
  /**
   * Stops the server as a crash would (immediate shutdown: connections cut, no checkpoint) and
   * starts it again on the same port and data, `downMs` later; resolves once it takes connections.
   */
  restart(downMs?: number): Promise<void>;
  /** Ends the pools, stops the server (immediate shutdown), removes the folder. */
  stop(): Promise<void>;
}

/** The folder of initdb and postgres, or undefined where PostgreSQL's server is not installed. */
export function postgresBinDir(): string | undefined {
  try {
    const dir = execFileSync('pg_config', ['--bindir'], { encoding: 'utf8' }).trim();
    return fs.existsSync(path.join(dir, 'initdb')) ? dir : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Why the PostgreSQL tests cannot run here (a skip message), or false. In CI a missing server is
 * a failure: .ci/run installs it.
 */
export function postgresMissing(): string | false {
  if (postgresBinDir()) return false;
  const why = "PostgreSQL's server is missing (apt-get install -y postgresql; .ci/run does)";
  if (process.env.CI === 'true') assert.fail(why);
  return `${why}: the PostgreSQL journal is not tested`;
}

interface RunAs {
  /** setpriv's options before the program. */
  setpriv: string[];
  owner?: { uid: number; gid: number };
}

/** As root, the programs run as the postgres user; otherwise as whoever runs the tests. */
function runAs(): RunAs {
  if (process.getuid?.() !== 0) return { setpriv: [] };
  let entry: string;
  try {
    entry = execFileSync('getent', ['passwd', 'postgres'], { encoding: 'utf8' });
  } catch {
    throw new Error('running as root, PostgreSQL needs the postgres user (Debian creates it)');
  }
  const [, , uid, gid] = entry.trim().split(':');
  return {
    setpriv: ['--reuid=postgres', '--regid=postgres', '--init-groups'],
    owner: { uid: Number(uid), gid: Number(gid) },
  };
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

function waitForExit(child: ChildProcess, ms: number): Promise<boolean> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve(true);
  return new Promise((resolve) => {
    const timer = setTimeout(() => resolve(false), ms);
    child.once('exit', () => {
      clearTimeout(timer);
      resolve(true);
    });
  });
}

async function initdb(bin: string, who: RunAs, data: string, log: string): Promise<void> {
  const out = fs.openSync(log, 'a');
  const child = spawn(
    'setpriv',
    [
      ...who.setpriv,
      '--pdeathsig=SIGKILL',
      path.join(bin, 'initdb'),
      ...['-D', data, '-U', 'postgres', '--auth=trust', '--encoding=UTF8', '--locale=C'],
      '--no-sync', // a throwaway cluster: nothing to keep over a power cut
      '--no-instructions',
    ],
    { stdio: ['ignore', out, out] },
  );
  fs.closeSync(out);
  if (!(await waitForExit(child, INITDB_DEADLINE_MS))) {
    child.kill('SIGKILL');
    throw new Error(`initdb still running after ${INITDB_DEADLINE_MS / 1000} s (${log})`);
  }
  if (child.exitCode !== 0)
    throw new Error(`initdb failed (${child.exitCode ?? child.signalCode}):\n${readLog(log)}`);
}

function readLog(log: string): string {
  return fs.existsSync(log)
    ? fs.readFileSync(log, 'utf8').trim().split('\n').slice(-15).join('\n')
    : '';
}

function serve(bin: string, who: RunAs, dir: string, port: number): ChildProcess {
  const sockets = path.join(dir, 'sock');
  // A socket path too long for sun_path: TCP only.
  const socketDir = `${sockets}/.s.PGSQL.${port}`.length <= SOCKET_PATH_MAX ? sockets : '';
  const log = fs.openSync(path.join(dir, 'server.log'), 'a');
  const settings = {
    listen_addresses: '127.0.0.1',
    unix_socket_directories: socketDir,
    // A throwaway cluster: no fsync (nothing to keep over a power cut), but every commit written
    // before it returns, so a commit survives the server's crash (restart()), as in production.
    fsync: 'off',
    full_page_writes: 'off',
    max_connections: '50',
  };
  const child = spawn(
    'setpriv',
    [
      ...who.setpriv,
      '--pdeathsig=SIGQUIT',
      path.join(bin, 'postgres'),
      ...['-D', path.join(dir, 'data'), '-p', String(port)],
      ...Object.entries(settings).flatMap(([name, value]) => ['-c', `${name}=${value}`]),
    ],
    { stdio: ['ignore', log, log] },
  );
  fs.closeSync(log);
  return child;
}

/** Resolves once the server takes connections; throws if it exits or the deadline passes. */
async function ready(child: ChildProcess, url: string, log: string): Promise<void> {
  const deadline = Date.now() + READY_DEADLINE_MS;
  for (;;) {
    if (child.exitCode !== null || child.signalCode !== null)
      throw new Error(`postgres exited (${child.exitCode ?? child.signalCode}):\n${readLog(log)}`);
    const client = new pg.Client({ connectionString: url });
    try {
      await client.connect();
      await client.end();
      return;
    } catch (error) {
      await client.end().catch(() => undefined);
      if (Date.now() > deadline)
        throw new Error(`postgres not ready after ${READY_DEADLINE_MS / 1000} s`, { cause: error });
    }
    await sleep(100);
  }
}

/** Starts the server on a free port; another process may take the port first: then another. */
async function serveOnFreePort(
  bin: string,
  who: RunAs,
  dir: string,
): Promise<{ child: ChildProcess; port: number; url: string }> {
  const log = path.join(dir, 'server.log');
  for (let tries = 1; ; tries++) {
    const port = await freePort();
    const url = `postgres://postgres@127.0.0.1:${port}/postgres`;
    const child = serve(bin, who, dir, port);
    try {
      await ready(child, url, log);
      return { child, port, url };
    } catch (error) {
      child.kill('SIGKILL');
      await waitForExit(child, STOP_DEADLINE_MS);
      if (tries >= 3 || !/could not bind|already in use/i.test(String(error))) throw error;
    }
  }
}

/** Stops the server as `pg_ctl stop -m immediate` does (SIGQUIT), then SIGKILL if it lingers. */
async function stopServer(child: ChildProcess): Promise<void> {
  child.kill('SIGQUIT');
  if (await waitForExit(child, STOP_DEADLINE_MS)) return;
  child.kill('SIGKILL');
  await waitForExit(child, STOP_DEADLINE_MS);
}

export async function startPostgres(): Promise<Postgres> {
  const bin = postgresBinDir();
  if (!bin) throw new Error("PostgreSQL's server is not installed (pg_config --bindir)");
  const who = runAs();
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'pg-'));
  fs.mkdirSync(path.join(dir, 'sock'));
  if (who.owner)
    for (const p of [dir, path.join(dir, 'sock')]) fs.chownSync(p, who.owner.uid, who.owner.gid);
  try {
    await initdb(bin, who, path.join(dir, 'data'), path.join(dir, 'initdb.log'));
    const { child, port, url } = await serveOnFreePort(bin, who, dir);
    const restart = async (): Promise<ChildProcess> => {
      const again = serve(bin, who, dir, port);
      await ready(again, url, path.join(dir, 'server.log'));
      return again;
    };
    return cluster(child, port, url, dir, restart);
  } catch (error) {
    fs.rmSync(dir, { recursive: true, force: true });
    throw error;
  }
}

function cluster(
  started: ChildProcess,
  port: number,
  url: string,
  dir: string,
  serveAgain: () => Promise<ChildProcess>,
): Postgres {
  let child = started;
  const pools = new Set<pg.Pool>();
  let databases = 0;
  const urlOf = (name: string) => url.replace(/\/postgres$/, `/${name}`);
  return {
    url,
    port,
    get pid() {
      return child.pid!;
    },
    dir,
    async freshDatabase() {
      const name = `test_${++databases}`;
      const admin = new pg.Client({ connectionString: url });
      await admin.connect();
      try {
        await admin.query(`CREATE DATABASE ${name} TEMPLATE template0 STRATEGY file_copy`);
      } finally {
        await admin.end();
      }
      return urlOf(name);
    },
    pool(poolUrl, max = 4) {
      const pool = new pg.Pool({ connectionString: poolUrl, max });
      // An idle client whose server went away reports it here; unheard, it would end the process.
      pool.on('error', () => undefined);
      pools.add(pool);
      return pool;
    },
    async restart(downMs = 0) {
      await stopServer(child);
      await sleep(downMs);
      child = await serveAgain();
    },
    async stop() {
      await Promise.all([...pools].map((pool) => pool.end().catch(() => undefined)));
      pools.clear();
      await stopServer(child);
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}

/**
 * One cluster for the test file (or the describe it is called in): started before its tests,
 * stopped after them. Read `.cluster` inside tests and hooks.
 */
export function usePostgres(): { readonly cluster: Postgres } {
  let started: Postgres | undefined;
  before(async () => {
    started = await startPostgres();
  });
  after(async () => {
    await started?.stop();
  });
  return {
    get cluster() {
      assert.ok(started, 'the PostgreSQL cluster is not started (usePostgres before its tests)');
      return started;
    },
  };
}
