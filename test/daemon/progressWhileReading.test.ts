// The daemon's progress line while a large file is still being read: only its rows read so far
// are in the journal, so its rows to go are estimated from the bytes read (or said not known
// yet), never "0 to go" nor an ETA of 0 s while rows remain. The real daemon as a child process
// and the real simulator.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { after, it } from 'node:test';
import {
  contactsCsv,
  listDir,
  type Proc,
  readLogLines,
  startDaemon,
  startSimulatorProcess,
  tempDir,
  waitUntil,
} from './helpers.js';

const ROWS = 120_000;

interface ProgressLine {
  event?: string;
  message: string;
  rowsDone: number;
  rowsToGo: number | null;
  estimated?: boolean;
  etaSeconds: number | null;
}

const running: Proc[] = [];
const dirs: string[] = [];
after(async () => {
  for (const p of running) p.kill('SIGKILL');
  await Promise.all(running.map((p) => p.exited));
  for (const d of dirs) fs.rmSync(d, { recursive: true, force: true });
});

it('estimates the rows to go while the file is read, and never says 0 to go before the end', async () => {
  const work = tempDir('progress-reading');
  dirs.push(work);
  const dataDir = path.join(work, 'data');
  const sim = await startSimulatorProcess(work);
  after(() => sim.stop());
  const daemon = await startDaemon({
    dataDir,
    simulator: sim,
    env: { SMSDROP_PROGRESS_INTERVAL_MS: '1000', SMSDROP_MAX_PER_REQUEST: '200' },
  });
  running.push(daemon);
  const big = path.join(work, 'big.csv');
  fs.writeFileSync(big, contactsCsv(ROWS));
  fs.renameSync(big, path.join(dataDir, 'inbox', 'big.csv'));
  const done = path.join(dataDir, 'done');
  await waitUntil(
    () => listDir(done).includes('big.result.csv'),
    400_000,
    'big.csv filed',
    () => daemon.output().slice(-3000),
  );
  daemon.kill('SIGTERM');
  await daemon.exited;

  const lines = readLogLines<ProgressLine>(path.join(dataDir, 'logs')).filter(
    (l) => l.event === 'progress',
  );
  const whileReading = lines.filter((l) => l.estimated === true);
  assert.ok(whileReading.length > 0, `a progress line while reading:\n${daemon.output()}`);
  for (const l of whileReading)
    assert.match(l.message, /~\d+ to go \(estimated|to go not known yet/, l.message);
  const early = lines.filter((l) => l.rowsDone < ROWS && (l.rowsToGo === 0 || l.etaSeconds === 0));
  assert.deepEqual(
    early.map((l) => l.message),
    [],
    'no "0 to go" nor "ETA 0 s" while rows remain',
  );
});
