// A data directory whose volume fills up under a running daemon (a small tmpfs: CI runs as
// root): /healthz answers 503 naming E_DISK_FULL, a file that failed on it is not counted as
// being sent, and once room is made /healthz is 200 again by itself.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import {
  contactsCsv,
  httpUrlOf,
  type Proc,
  type Simulator,
  startDaemon,
  startSimulatorProcess,
  tempDir,
  waitUntil,
} from './helpers.js';

/** Mounts a tmpfs of `size` on `dir`; why it cannot, otherwise. */
function mountTmpfs(dir: string, size: string): string | undefined {
  if (process.getuid?.() !== 0) return 'needs root to mount a small tmpfs';
  const r = spawnSync('mount', ['-t', 'tmpfs', '-o', `size=${size}`, 'tmpfs', dir], {
    encoding: 'utf8',
  });
  return r.status === 0 ? undefined : `cannot mount a tmpfs: ${(r.stderr || '').trim()}`;
}

/** Writes `file` until the volume is full. */
function fill(file: string): void {
  const chunk = Buffer.alloc(64 * 1024, 1);
  const fd = fs.openSync(file, 'a');
  try {
    for (;;) fs.writeSync(fd, chunk);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOSPC') throw err;
  } finally {
    fs.closeSync(fd);
  }
}

/** waitUntil for an answer over HTTP. */
async function eventually(check: () => Promise<boolean>, what: string, show: () => string) {
  const deadline = Date.now() + 30_000;
  while (!(await check())) {
    if (Date.now() > deadline) assert.fail(`timed out waiting for ${what}\n${show()}`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

interface Health {
  ok: boolean;
  checks: { disk: string };
  reasons: string[];
}

describe('smsdrop run: a data directory whose volume fills up', () => {
  let dir: string;
  let small: string;
  let cannotMount: string | undefined;
  let sim: Simulator;
  let daemon: Proc | undefined;

  before(async () => {
    dir = tempDir('daemon-disk-full');
    small = path.join(dir, 'small');
    fs.mkdirSync(small);
    cannotMount = mountTmpfs(small, '6m');
    sim = await startSimulatorProcess(dir, ['--latency-ms', '1-3']);
  });

  after(async () => {
    daemon?.kill('SIGKILL');
    await daemon?.exited;
    await sim?.stop();
    if (!cannotMount) spawnSync('umount', ['-l', small]);
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('/healthz answers 503 naming E_DISK_FULL while it is full, and 200 once room is made', async (t) => {
    if (cannotMount) return t.skip(cannotMount);
    const data = path.join(small, 'data');
    daemon = await startDaemon({
      dataDir: data,
      simulator: sim,
      env: { SMSDROP_DISK_FLOOR_MB: '1' },
    });
    const d = daemon;
    const url = httpUrlOf(d);
    const health = async () => {
      const res = await fetch(`${url}/healthz`);
      return { status: res.status, body: (await res.json()) as Health };
    };
    assert.equal((await health()).status, 200, 'room at first');

    // A file taken while the volume fills: its journal writes fail.
    fs.writeFileSync(path.join(data, 'inbox', 'big.csv'), contactsCsv(20_000));
    const filler = path.join(small, 'filler');
    fill(filler);
    await waitUntil(
      () => /E_DISK_FULL/.test(d.output()),
      30_000,
      'E_DISK_FULL in the log',
      d.output,
    );
    const full = await health();
    assert.equal(full.status, 503);
    assert.match(full.body.checks.disk, /E_DISK_FULL/);
    assert.ok(
      full.body.reasons.some((r) => /E_DISK_FULL/.test(r)),
      full.body.reasons.join('; '),
    );
    await eventually(
      async () => {
        const metrics = await (await fetch(`${url}/metrics`)).text();
        return (
          /^smsdrop_files_in_progress 0$/m.test(metrics) &&
          !/^smsdrop_files\{status="(sending|intake)"\} [1-9]/m.test(metrics)
        );
      },
      'no file counted as read or sent once it failed',
      d.output,
    );

    fs.rmSync(filler);
    await eventually(async () => (await health()).status === 200, 'healthy again', d.output);
    assert.match((await health()).body.checks.disk, /^writable: /);
    assert.equal(d.child.exitCode, null, 'the daemon kept running');
  });
});
