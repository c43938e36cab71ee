// The throwaway PostgreSQL of the tests (cluster.ts): it takes connections, gives each test a
// database of its own, and never outlives the process that started it, even one killed with
// SIGKILL (no after hook runs then).
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, test } from 'node:test';
import pg from 'pg';
import { postgresMissing, startPostgres, usePostgres } from './cluster.js';

const HOLDER = path.join(import.meta.dirname, '..', 'fixtures', 'pg', 'holdCluster.ts');

/** Alive and not a zombie (a zombie holds no port, memory or files). */
function running(pid: number): boolean {
  try {
    return !/^\d+ \(.*\) Z/.test(fs.readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return false;
  }
}

/** The postmaster and its children (checkpointer, writers, backends...). */
function serverProcesses(postmaster: number): number[] {
  const children = fs
    .readdirSync('/proc')
    .filter((name) => /^\d+$/.test(name))
    .filter((pid) => {
      try {
        const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
        return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]) === postmaster;
      } catch {
        return false;
      }
    })
    .map(Number);
  return [postmaster, ...children];
}

async function allGone(pids: readonly number[], ms: number): Promise<number[]> {
  for (const deadline = Date.now() + ms; Date.now() < deadline; await sleep(50))
    if (!pids.some(running)) return [];
  return pids.filter(running);
}

async function refused(port: number): Promise<boolean> {
  const client = new pg.Client({ host: '127.0.0.1', port, user: 'postgres' });
  try {
    await client.connect();
    await client.end();
    return false;
  } catch {
    return true;
  }
}

describe('a throwaway PostgreSQL cluster', { skip: postgresMissing() }, () => {
  const pg15 = usePostgres();

  test('takes connections as superuser and gives each test a database of its own', async () => {
    const [a, b] = [await pg15.cluster.freshDatabase(), await pg15.cluster.freshDatabase()];
    assert.notEqual(a, b);
    const one = pg15.cluster.pool(a);
    const two = pg15.cluster.pool(b);
    await one.query('CREATE TABLE t (x integer)');
    const { rows } = await two.query<{ n: string }>(
      "SELECT count(*) AS n FROM information_schema.tables WHERE table_name = 't'",
    );
    assert.equal(rows[0]?.n, '0', 'a table of one database is not in the other');
    const { rows: who } = await one.query<{ u: string; s: boolean }>(
      "SELECT current_user AS u, current_setting('is_superuser') = 'on' AS s",
    );
    assert.deepEqual(who[0], { u: 'postgres', s: true });
  });

  test('restart() is a crash and a start: committed data stays, the same URL works', async () => {
    const url = await pg15.cluster.freshDatabase();
    const pool = pg15.cluster.pool(url);
    await pool.query('CREATE TABLE kept (x integer); INSERT INTO kept VALUES (1)');
    const before = pg15.cluster.pid;
    await pg15.cluster.restart();
    assert.notEqual(pg15.cluster.pid, before, 'a new postmaster');
    const { rows } = await pool.query<{ x: number }>('SELECT x FROM kept');
    assert.deepEqual(rows, [{ x: 1 }]);
  });

  test('stop() ends the server and its children and removes its folder', async (t) => {
    const started = Date.now();
    const other = await startPostgres();
    t.diagnostic(`a second cluster started in ${Date.now() - started} ms`);
    const pool = other.pool(other.url);
    await pool.query('SELECT 1');
    const server = serverProcesses(other.pid);
    assert.ok(server.length > 2, 'the postmaster and its children run');
    await other.stop();
    assert.deepEqual(server.filter(running), [], 'the server and its children are gone');
    assert.ok(!fs.existsSync(other.dir));
    assert.ok(await refused(other.port));
  });

  test('a process killed with SIGKILL takes its server with it', async () => {
    const holder = spawn(process.execPath, ['--import', 'tsx', HOLDER], {
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let output = '';
    holder.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    const line = await new Promise<string>((resolve, reject) => {
      holder.stdout.on('data', () => output.includes('\n') && resolve(output.split('\n')[0]!));
      holder.once('exit', (code) => reject(new Error(`the holder exited (${code}): ${output}`)));
    });
    const held = JSON.parse(line) as { pid: number; port: number; dir: string; shmid: number };
    let server: number[] = [held.pid];
    try {
      assert.ok(!(await refused(held.port)), 'the held server takes connections');
      server = serverProcesses(held.pid);
      assert.ok(server.length > 2, 'the postmaster and its children run');
      holder.kill('SIGKILL');
      assert.deepEqual(await allGone(server, 30_000), [], 'the server died with the process');
      assert.ok(await refused(held.port));
      const segments = fs.readFileSync('/proc/sysvipc/shm', 'utf8').split('\n').slice(1);
      assert.ok(
        !segments.some((s) => s.trim().split(/\s+/)[1] === String(held.shmid)),
        'its System V segment was removed (an immediate shutdown, not a SIGKILL)',
      );
    } finally {
      holder.kill('SIGKILL');
      for (const pid of server.filter(running)) process.kill(pid, 'SIGKILL');
      fs.rmSync(held.dir, { recursive: true, force: true });
    }
  });
});
