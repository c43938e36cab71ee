// The rate limit of the settings held by two `smsdrop run` daemons together on one PostgreSQL
// journal (the runtime's wiring of src/send/accountRate.ts): the requests the simulator receives
// from both keep SMSDROP_REQUESTS_PER_SECOND as one daemon's would.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { after, describe, test } from 'node:test';
import {
  assertEachOnce,
  contactsCsv,
  numbersOf,
  type Proc,
  startDaemon,
  startSimulatorProcess,
  tempDir,
  waitUntil,
} from '../daemon/helpers.js';
import { postgresMissing, usePostgres } from './cluster.js';

const RATE = 4;
const ROWS = 12; // each row its own message: a request each

describe('two daemons sharing a rate limit', { skip: postgresMissing() }, () => {
  const pg15 = usePostgres();
  const daemons: Proc[] = [];
  const dirs: string[] = [];
  after(async () => {
    for (const d of daemons) d.kill('SIGKILL');
    await Promise.all(daemons.map((d) => d.exited));
    dirs.forEach((d) => fs.rmSync(d, { recursive: true, force: true }));
  });

  test('the requests of both keep SMSDROP_REQUESTS_PER_SECOND together', async (t) => {
    const url = await pg15.cluster.freshDatabase();
    const work = tempDir('pg-rate');
    dirs.push(work);
    const sim = await startSimulatorProcess(work);
    after(() => sim.stop());
    const nodes = ['a', 'b'].map((name) => ({ name, dataDir: path.join(work, name) }));
    for (const node of nodes)
      daemons.push(
        await startDaemon({
          dataDir: node.dataDir,
          simulator: sim,
          env: {
            SMSDROP_DATABASE_URL: url,
            SMSDROP_NODE_ID: node.name,
            SMSDROP_REQUESTS_PER_SECOND: String(RATE),
          },
        }),
      );
    fs.writeFileSync(path.join(nodes[0]!.dataDir, 'inbox', 'one.csv'), contactsCsv(ROWS));
    fs.writeFileSync(
      path.join(nodes[1]!.dataDir, 'inbox', 'two.csv'),
      contactsCsv(ROWS, { from: ROWS }),
    );
    const done = (i: number, name: string) =>
      fs.existsSync(path.join(nodes[i]!.dataDir, 'done', name));
    await waitUntil(
      () => done(0, 'one.csv') && done(1, 'two.csv'),
      120_000,
      'each file done',
      () => daemons.map((d) => d.output()).join('\n---\n'),
    );
    const records = sim.records();
    assertEachOnce(records, numbersOf(2 * ROWS));
    const times = records.map((r) => Date.parse(r.time)).sort((x, y) => x - y);
    // The most requests received within any 3 s: RATE a second and the one at its start for the
    // two together, plus a few that a busy machine may have held and let go at once (a daemon or
    // the simulator stalled for a second). Each daemon pacing only itself would let all 24
    // through in about 3 s.
    const most = Math.max(
      ...times.map((t0) => times.filter((t) => t >= t0 && t < t0 + 3_000).length),
    );
    t.diagnostic(
      `${times.length} requests over ${times.at(-1)! - times[0]!} ms; at most ${most} in 3 s`,
    );
    assert.ok(most <= 3 * RATE + 1 + 5, `${most} requests within 3 s at ${RATE} a second`);
  });
});
