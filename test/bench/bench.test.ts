// The benchmark must not rot: a small run end to end (from source, no build), its JSON keys, and
// that smsdrop sent exactly what the generated file asks for. No timing is asserted.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import { measureJournalInsert } from '../../bench/baselines.js';
import { journalPath } from '../../src/journals/index.js';
import { withSqliteFile } from '../sqliteFile.js';

const BENCH = path.resolve('bench/bench.ts');

function runBench(
  args: string[],
): Promise<{ status: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', BENCH, ...args], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
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
  'baselineJournalInsertRowsPerSec',
  'baselineRequestsPerSec',
  'ratioToIngestBaseline',
  'networkEfficiency',
  'peakRssMb',
  'reportSeconds',
];

test(
  'bench --rows 2000 --json prints one JSON object with every figure, and the send matches the file',
  // no timeout of its own: scripts/run-tests.mjs bounds the file
  async () => {
    const r = await runBench(['--rows', '2000', '--json', '--cli', 'src', '--concurrency', '4']);
    assert.equal(r.status, 0, r.stderr);
    const lines = r.stdout.trim().split('\n');
    assert.equal(lines.length, 1, 'stdout holds only the JSON object');
    const result = JSON.parse(lines[0]!) as Record<string, unknown> & {
      mix: {
        expectedRequests: number;
        expectedAccepted: number;
        invalidRows: number;
        duplicateRows: number;
      };
      send: { status: string; accepted: number; invalid: number; duplicates: number };
    };
    for (const key of REQUIRED_KEYS) assert.ok(key in result, `missing ${key}`);
    for (const key of REQUIRED_KEYS.filter((k) => k !== 'reportSeconds')) {
      assert.ok(
        typeof result[key] === 'number' && Number.isFinite(result[key]) && result[key] > 0,
        `${key} = ${String(result[key])}`,
      );
    }
    assert.equal(result.rows, 2000);
    assert.equal(result.send.status, 'done');
    assert.equal(result.requests, result.mix.expectedRequests);
    assert.equal(result.send.accepted, result.mix.expectedAccepted);
    assert.equal(result.send.invalid, result.mix.invalidRows);
    assert.equal(result.send.duplicates, result.mix.duplicateRows);
    assert.ok(
      result.mix.invalidRows > 0 && result.mix.duplicateRows > 0,
      'the file has invalid and duplicate rows',
    );
    assert.ok(Array.isArray(result.targets), 'targets are listed');
    const cpu = result.cpu as Record<string, number>;
    for (const key of [
      'sendSeconds',
      'simulatorDuringSendSeconds',
      'baselineClientMsPerRequest',
      'baselineSimulatorMsPerRequest',
      'partsSeconds',
    ]) {
      assert.ok(cpu[key]! > 0, `cpu.${key} = ${cpu[key]}: read from /proc`);
    }
    assert.ok(
      (result.ratioCeilingCpu as number) > 0 &&
        (result.ratioCeiling as number) <= (result.ratioCeilingCpu as number),
    );
    // The journal floor: parse then store in the journal schema, one thread. From the rounded
    // rates.
    const perRow = (key: string) => 1 / (result[key] as number);
    const oneThread =
      (perRow('baselineParseRowsPerSec') + perRow('baselineInsertRowsPerSec')) /
      (perRow('baselineParseRowsPerSec') + perRow('baselineJournalInsertRowsPerSec'));
    assert.ok(
      Math.abs((result.ratioCeilingJournalOneThread as number) - oneThread) <
        0.01 * oneThread + 0.001,
      `ratioCeilingJournalOneThread = ${String(result.ratioCeilingJournalOneThread)}, rates give ${oneThread}`,
    );
    assert.ok((result.ratioCeilingJournalCpu as number) > 0);
    // Adding the requests' client CPU to the same thread can only lower that ceiling.
    assert.ok(
      (result.ratioCeilingOneThread as number) > 0 &&
        (result.ratioCeilingOneThread as number) <= (result.ratioCeilingJournalOneThread as number),
    );
    // This run's own CPU over the cores bounds what it reached (e2e can only be longer than that).
    assert.ok(
      (result.ratioToIngestBaseline as number) <=
        (result.ratioCeilingOwnCpu as number) * 1.05 + 0.001,
      `ratio ${String(result.ratioToIngestBaseline)} above what its CPU allows, ${String(result.ratioCeilingOwnCpu)}`,
    );
    assert.equal(typeof cpu.sendBudgetForTargetSeconds, 'number');
    const times = result.requestTimes as Record<
      'duringIntake' | 'afterIntake',
      { count: number; meanMs: number | null }
    >;
    assert.equal(
      times.duringIntake.count + times.afterIntake.count,
      result.requests,
      'every request is on one side of the end of intake',
    );
  },
);

test('bench refuses a bad option with exit 2 and says which', async () => {
  const r = await runBench(['--rows', 'many']);
  assert.equal(r.status, 2);
  assert.match(r.stderr, /--rows/);
});

test('the journal floor stores each row in the journal schema, a number once per group, in batches', async (t) => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'smsdrop-bench-floor-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const csv = path.join(dir, 'rows.csv');
  // Line 4 repeats line 2's number in its group (spaces aside); line 5 has it in another group.
  writeFileSync(
    csv,
    '手机号,模板ID,参数1,参数2\n13800000001,1,a,b\n13800000002,1,a,b\n138 0000 0001,1,a,b\n13800000001,2,c,d\n',
  );
  const result = await measureJournalInsert(csv, journalPath(dir));
  assert.equal(result.count, 4, 'every data row is handed to the store');
  const rows = withSqliteFile(
    dir,
    (db) =>
      db.prepare('SELECT line, phone, group_id AS g FROM rows ORDER BY line').all() as {
        line: number;
        phone: string;
        g: number;
      }[],
  );
  assert.deepEqual(
    rows.map((r) => [r.line, r.phone]),
    [
      [2, '13800000001'],
      [3, '13800000002'],
      [5, '13800000001'],
    ],
  );
  assert.equal(new Set(rows.map((r) => r.g)).size, 2, 'one group per (template, values)');
});
