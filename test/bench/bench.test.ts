// The benchmark must not rot: a small run end to end (from source, no build), its JSON keys, and
// that smsdrop sent exactly what the generated file asks for. No timing is asserted.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import path from 'node:path';
import { test } from 'node:test';

const BENCH = path.resolve('bench/bench.ts');

function runBench(args: string[]): Promise<{ status: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', BENCH, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    child.on('error', reject);
    child.on('close', (status) => resolve({ status, stdout, stderr }));
  });
}

const REQUIRED_KEYS = [
  'rows',
  'requests',
  'e2eSeconds',
  'rowsPerSec',
  'baselineParseRowsPerSec',
  'baselineInsertRowsPerSec',
  'baselineRequestsPerSec',
  'ratioToIngestBaseline',
  'networkEfficiency',
  'peakRssMb',
  'reportSeconds',
];

test('bench --rows 2000 --json prints one JSON object with every figure, and the send matches the file', { timeout: 120_000 }, async () => {
  const r = await runBench(['--rows', '2000', '--json', '--cli', 'src', '--concurrency', '4']);
  assert.equal(r.status, 0, r.stderr);
  const lines = r.stdout.trim().split('\n');
  assert.equal(lines.length, 1, 'stdout holds only the JSON object');
  const result = JSON.parse(lines[0]!) as Record<string, unknown> & {
    mix: { expectedRequests: number; expectedAccepted: number; invalidRows: number; duplicateRows: number };
    send: { status: string; accepted: number; invalid: number; duplicates: number };
  };
  for (const key of REQUIRED_KEYS) assert.ok(key in result, `missing ${key}`);
  for (const key of REQUIRED_KEYS.filter((k) => k !== 'reportSeconds')) {
    assert.ok(typeof result[key] === 'number' && Number.isFinite(result[key]) && (result[key] as number) > 0, `${key} = ${String(result[key])}`);
  }
  assert.equal(result.rows, 2000);
  assert.equal(result.send.status, 'done');
  assert.equal(result.requests, result.mix.expectedRequests);
  assert.equal(result.send.accepted, result.mix.expectedAccepted);
  assert.equal(result.send.invalid, result.mix.invalidRows);
  assert.equal(result.send.duplicates, result.mix.duplicateRows);
  assert.ok(result.mix.invalidRows > 0 && result.mix.duplicateRows > 0, 'the file has invalid and duplicate rows');
  assert.ok(Array.isArray(result.targets), 'targets are listed');
  const cpu = result.cpu as Record<string, number>;
  for (const key of ['sendSeconds', 'simulatorDuringSendSeconds', 'baselineClientMsPerRequest', 'baselineSimulatorMsPerRequest', 'partsSeconds']) {
    assert.ok(cpu[key]! > 0, `cpu.${key} = ${cpu[key]}: read from /proc`);
  }
  assert.ok((result.ratioCeilingCpu as number) > 0 && (result.ratioCeiling as number) <= (result.ratioCeilingCpu as number));
  const times = result.requestTimes as Record<'duringIntake' | 'afterIntake', { count: number; meanMs: number | null }>;
  assert.equal(times.duringIntake.count + times.afterIntake.count, result.requests, 'every request is on one side of the end of intake');
});

test('bench refuses a bad option with exit 2 and says which', async () => {
  const r = await runBench(['--rows', 'many']);
  assert.equal(r.status, 2);
  assert.match(r.stderr, /--rows/);
});
