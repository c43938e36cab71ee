// The journal's write-ahead log stays small while a long list is sent (issue 32): 20,000 rows,
// each its own message, so each request's outcome is a commit of its own. With a checkpoint only
// every 20,000 pages the WAL of such a send reached 82 MB for a 0.8 MB file. Sizes only: the
// files are sampled from outside while `smsdrop send` runs, nothing is timed.
import assert from 'node:assert/strict';
import { rmSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { after, describe, it } from 'node:test';
import { WAL_CHECKPOINT_PAGES, WAL_SIZE_LIMIT_BYTES } from '../../src/journal/open.js';
import {
  cleanEnv,
  contactsCsv,
  CREDENTIALS,
  type Proc,
  type Simulator,
  startProcess,
  startSimulatorProcess,
  tempDir,
} from '../daemon/helpers.js';

const ROWS = 20_000;
/** The checkpoint's bound, plus room for the last commits before it ran. */
const WAL_BOUND = WAL_CHECKPOINT_PAGES * 4096 + 8 * 1024 * 1024;

const running: Proc[] = [];
let sim: Simulator | undefined;
const dir = tempDir('wal-bound');
after(async () => {
  for (const proc of running) proc.kill('SIGKILL');
  await Promise.all(running.map((proc) => proc.exited));
  await sim?.stop();
  rmSync(dir, { recursive: true, force: true });
});

const sizeOf = (file: string): number => statSync(file, { throwIfNoEntry: false })?.size ?? 0;

describe('the write-ahead log during a long send', () => {
  it(`stays under ${WAL_BOUND / 1024 / 1024} MB for ${ROWS} rows, each its own request, and is cut back after`, async () => {
    assert.ok(WAL_SIZE_LIMIT_BYTES <= WAL_BOUND);
    sim = await startSimulatorProcess(dir);
    const csv = path.join(dir, 'list.csv');
    writeFileSync(csv, contactsCsv(ROWS));
    const dataDir = path.join(dir, 'data');
    const wal = path.join(dataDir, 'journal.sqlite-wal');
    const intentsWal = path.join(dataDir, 'journal.intents.sqlite-wal');
    const send = startProcess(
      ['send', csv, '--json'],
      cleanEnv({
        ...CREDENTIALS,
        SMSDROP_BASE_URL: sim.url,
        SMSDROP_DATA_DIR: dataDir,
        SMSDROP_CONCURRENCY: '16',
      }),
    );
    running.push(send);
    let peak = 0;
    let intentsPeak = 0;
    let samples = 0;
    const timer = setInterval(() => {
      const size = sizeOf(wal);
      if (size > 0) samples++;
      peak = Math.max(peak, size);
      intentsPeak = Math.max(intentsPeak, sizeOf(intentsWal));
    }, 20);
    const { code } = await send.exited;
    clearInterval(timer);
    assert.equal(code, 0, send.output().slice(-2000));
    assert.match(send.output(), new RegExp(`"accepted":\\s*${ROWS}\\b`));
    assert.ok(samples > 10, `the WAL was seen while the send ran (${samples} samples)`);
    const mb = (n: number) => `${(n / 1024 / 1024).toFixed(1)} MB`;
    assert.ok(peak <= WAL_BOUND, `the WAL reached ${mb(peak)}, over ${mb(WAL_BOUND)}`);
    assert.ok(intentsPeak <= WAL_BOUND, `the intents file's WAL reached ${mb(intentsPeak)}`);
    assert.ok(sizeOf(wal) <= WAL_SIZE_LIMIT_BYTES, `left at ${mb(sizeOf(wal))}`);
  });
});
