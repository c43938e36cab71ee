// `npm run bench -- --daemon` must not rot: a tiny run end to end (from source, no build), on
// SQLite and on PostgreSQL, prints one JSON object with every file done, the counts the generator
// expects, and the daemon started with bin/smsdrop's Node settings (no timing asserted).
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import path from 'node:path';
import { describe, test } from 'node:test';
import type { DaemonBenchResult } from '../../bench/daemon.js';
import { postgresMissing } from '../pg/cluster.js';

const BENCH = path.resolve('bench/bench.ts');

function runBench(args: string[]): Promise<{ code: number | null; out: string; err: string }> {
  const child = spawn(process.execPath, ['--import', 'tsx', BENCH, ...args], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  child.stdout.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr.on('data', (d: Buffer) => (err += d.toString()));
  return new Promise((resolve) => child.once('close', (code) => resolve({ code, out, err })));
}

const TINY = ['--daemon', '--rows', '400', '--files', '2', '--idle-s', '0', '--latency-ms', '0'];

async function tinyRun(database: 'sqlite' | 'postgres'): Promise<DaemonBenchResult> {
  const r = await runBench([...TINY, '--database', database, '--cli', 'src', '--json']);
  assert.equal(r.code, 0, r.err);
  return JSON.parse(r.out) as DaemonBenchResult;
}

function assertWhole(result: DaemonBenchResult, journal: 'sqlite' | 'postgres'): void {
  assert.equal(result.journal, journal);
  assert.ok(result.ok, result.problems.join('; '));
  assert.deepEqual(result.nodeArgs, ['--max-semi-space-size=8', '--no-concurrent-recompilation']);
  assert.equal(result.mallocArenaMax, '1');
  assert.ok(result.idleRssMb > 0);
  assert.equal(result.files.length, 2);
  for (const f of result.files) {
    assert.equal(f.outcome, 'done');
    assert.ok(f.requests > 0 && f.accepted > 0);
    assert.ok(f.peakRssMb >= f.rssAfterDoneMb * 0.9, `${f.peakRssMb} ${f.rssAfterDoneMb}`);
    assert.notEqual(f.takeToFirstRequestS, null);
    assert.notEqual(f.requestsPerSec, null);
  }
}

describe('npm run bench -- --daemon', () => {
  test('on SQLite: every file done, with the figures', async () => {
    assertWhole(await tinyRun('sqlite'), 'sqlite');
  });

  test('on PostgreSQL', { skip: postgresMissing() }, async () => {
    assertWhole(await tinyRun('postgres'), 'postgres');
  });

  test('a wrong option exits 2 with the usage', async () => {
    const r = await runBench(['--daemon', '--files', '0']);
    assert.equal(r.code, 2);
    assert.match(r.err, /--files/);
    assert.match(r.err, /usage: npm run bench -- --daemon/);
  });
});
