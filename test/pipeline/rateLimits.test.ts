// The message window end to end: the real CLI against the simulator. What the provider received,
// and when the journal says each request started, never pass N numbers in any span of the window;
// the next run goes on with the same window instead of a fresh one.
import assert from 'node:assert/strict';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { RunningSimulator } from '../../src/simulator/index.js';
import { deliveries, envFor, runCli, startSim, tempDir, writeCsv } from './helpers.js';
import { withSqliteFile } from '../sqliteFile.js';

const numbers = (from: number, count: number) =>
  Array.from({ length: count }, (_, i) => `137${String(from + i).padStart(8, '0')}`);
const csvOf = (phones: string[], value: string) =>
  `phone,templateId,data1,data2\n${phones.map((p) => `${p},1,${value},x`).join('\n')}\n`;

/** Request starts from the journal: ms since the epoch and numbers, in order. */
function startsIn(dataDir: string): { at: number; numbers: number }[] {
  const rows = withSqliteFile(
    dataDir,
    (db) =>
      db
        .prepare(
          'SELECT a.started_at, b.numbers FROM attempts a JOIN batches b ON b.id = a.batch_id ORDER BY a.started_at',
        )
        .raw()
        .all() as [number, number][],
  );
  return rows.map(([at, n]) => ({ at, numbers: n }));
}

/** The most numbers in any span shorter than `ms`, starting at one of the times. */
function busiestSpan(times: { at: number; numbers: number }[], ms: number): number {
  let most = 0;
  for (const first of times) {
    const inSpan = times
      .filter((t) => t.at >= first.at && t.at < first.at + ms)
      .reduce((sum, t) => sum + t.numbers, 0);
    most = Math.max(most, inSpan);
  }
  return most;
}

describe('message window (SMSDROP_MESSAGE_WINDOW)', () => {
  let sim: RunningSimulator;
  before(async () => {
    sim = await startSim();
  });
  after(async () => {
    await sim.close();
  });

  it('never lets more than N numbers start within the window, holds the rest, says so, and sends every row once', async () => {
    const dir = tempDir();
    const data = path.join(dir, 'data');
    const phones = numbers(0, 1000);
    const file = writeCsv(dir, 'window.csv', csvOf(phones, 'w'));
    const t0 = Date.now();
    const run = await runCli(
      ['send', file, '--json'],
      envFor(sim, data, { SMSDROP_MESSAGE_WINDOW: '400/4s' }),
    );
    assert.equal(run.status, 0, run.stderr);
    assert.equal(run.json?.accepted, 1000);
    assert.match(run.stderr, /message window 400\/4s used up: the next request starts at/);
    const got = deliveries(sim);
    for (const p of phones)
      assert.equal(got.get(JSON.stringify([sim.records[0]!.appId, '1', ['w', 'x'], p])), 1, p);
    // Five requests of 200: two per window, so the last starts at least two windows after the
    // first.
    const starts = startsIn(data);
    assert.equal(starts.length, 5);
    assert.ok(
      busiestSpan(starts, 4000) <= 400,
      `journal: ${busiestSpan(starts, 4000)} numbers started within 4 s`,
    );
    assert.ok(starts[4]!.at - starts[0]!.at >= 8000);
    // The provider sees them a request's latency later, which a loaded machine stretches: allow it
    // 1 s.
    const received = sim.records
      .filter((r) => Date.parse(r.time) >= t0 - 1000)
      .map((r) => ({ at: Date.parse(r.time), numbers: r.to.length }));
    assert.ok(
      busiestSpan(received, 3000) <= 400,
      `provider: ${busiestSpan(received, 3000)} numbers received within 3 s`,
    );
  });

  it('the next run goes on with the window the last one used: a restart does not start a fresh one', async () => {
    const dir = tempDir();
    const data = path.join(dir, 'data');
    // Long enough that the second run starts inside it however slowly a loaded machine starts
    // processes.
    const env = envFor(sim, data, { SMSDROP_MESSAGE_WINDOW: '400/12s' });
    const first = await runCli(
      ['send', writeCsv(dir, 'a.csv', csvOf(numbers(5000, 400), 'a')), '--json'],
      env,
    );
    assert.equal(first.status, 0, first.stderr);
    const second = await runCli(
      ['send', writeCsv(dir, 'b.csv', csvOf(numbers(6000, 200), 'b')), '--json'],
      env,
    );
    assert.equal(second.status, 0, second.stderr);
    assert.equal(second.json?.accepted, 200);
    assert.match(second.stderr, /message window 400\/12s used up/);
    const starts = startsIn(data);
    assert.equal(starts.length, 3);
    assert.ok(
      starts[2]!.at - starts[0]!.at >= 12_000,
      `b.csv started ${starts[2]!.at - starts[0]!.at} ms after a.csv's first request`,
    );
  });
});
