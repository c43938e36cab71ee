// An idle daemon gives back the memory its last file grew: once no file is in progress it makes
// full collections (src/daemon/releaseMemory.ts), seen in V8's own trace (--trace-gc names a
// collection asked for through gc() "testing"); and the file pool says when its last job ended.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { createFilePool } from '../../src/daemon/pool.js';
import {
  contactsCsv,
  daemonEnv,
  startProcess,
  startSimulatorProcess,
  type Simulator,
  tempDir,
  waitUntil,
} from './helpers.js';

const FORCED = /Mark-Compact[^\n]*testing/;

describe('the daemon at idle after a file', () => {
  let dir: string;
  let sim: Simulator;
  before(async () => {
    dir = tempDir('idle-memory');
    sim = await startSimulatorProcess(dir, ['--latency-ms', '0-3']);
  });
  after(async () => {
    await sim?.stop();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('makes a full collection once the file is done, none before', async () => {
    const data = path.join(dir, 'data');
    const env = daemonEnv({ dataDir: data, simulator: sim });
    const daemon = startProcess(['run'], env, undefined, ['--trace-gc']);
    try {
      await daemon.waitFor(/watching .*inbox/);
      assert.doesNotMatch(daemon.output(), FORCED);
      fs.writeFileSync(path.join(data, 'inbox', 'a.csv'), contactsCsv(300));
      const result = path.join(data, 'done', 'a.result.csv');
      await waitUntil(() => fs.existsSync(result), 60_000, 'a.csv in done/', daemon.output);
      await daemon.waitFor(FORCED, 60_000);
    } finally {
      daemon.kill('SIGTERM');
      await daemon.exited;
    }
  });
});

describe('the file pool', () => {
  it('calls onIdle when its last job ends with none waiting', async () => {
    let idle = 0;
    const ends: (() => void)[] = [];
    const pool = createFilePool(
      2,
      () => new Promise<void>((resolve) => ends.push(resolve)),
      () => {},
      () => idle++,
    );
    pool.add('a');
    pool.add('b');
    await waitUntil(() => ends.length === 2, 5_000, 'both jobs running');
    ends[0]!();
    await new Promise((resolve) => setImmediate(resolve));
    assert.equal(idle, 0);
    ends[1]!();
    await waitUntil(() => idle === 1, 5_000, 'onIdle after the last job');
  });
});
