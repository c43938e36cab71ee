// The daemon's progress line and `smsdrop status` while a large file is still being read: only its
// rows read so far are in the journal, so its rows (to go) are estimated from the bytes read (or
// said not known yet), never "0 to go" nor an ETA of 0 s while rows remain, nor the rows read so
// far taken for the file. The real daemon and CLI as child processes and the real simulator.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { after, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { smsdrop } from '../cli/helpers.js';
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

interface StatusFile {
  status: string;
  estimated: boolean;
  sendable: number;
  settled: number;
  pending: number;
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
  // What status says while the file is read, asked again and again until it is filed.
  const reading: StatusFile[] = [];
  const deadline = Date.now() + 600_000;
  while (!listDir(done).includes('big.result.csv') && Date.now() < deadline) {
    const status = await smsdrop(['status', '--json'], { SMSDROP_DATA_DIR: dataDir });
    const files = (JSON.parse(status.stdout) as { files: StatusFile[] }).files;
    reading.push(...files.filter((f) => f.status === 'intake'));
    await sleep(500); // each status is a process of its own: leave the daemon the machine
  }
  await waitUntil(
    () => listDir(done).includes('big.result.csv'),
    600_000,
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
  const estimated = reading.filter((f) => f.estimated && f.pending > 0);
  assert.ok(estimated.length > 0, `status while reading: ${JSON.stringify(reading)}`);
  for (const f of estimated) assert.ok(f.sendable > f.settled, JSON.stringify(f));
  const early = lines.filter((l) => l.rowsDone < ROWS && (l.rowsToGo === 0 || l.etaSeconds === 0));
  assert.deepEqual(
    early.map((l) => l.message),
    [],
    'no "0 to go" nor "ETA 0 s" while rows remain',
  );
});
