// smsdrop end to end on a PostgreSQL journal: the real CLI (child processes) with
// SMSDROP_DATABASE_URL against a real PostgreSQL and the real simulator. `send` sends every valid
// number exactly once (the simulator's record) and `report` and `status` read it back; then two
// `smsdrop run` daemons, each with its own data directory, share one database.

import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { after, describe, test } from 'node:test';
import { smsdrop } from '../cli/helpers.js';
import {
  assertEachOnce,
  CREDENTIALS,
  contactsCsv,
  numbersOf,
  type Proc,
  startDaemon,
  startSimulatorProcess,
  tempDir,
  waitUntil,
} from '../daemon/helpers.js';
import { postgresMissing, usePostgres } from './cluster.js';

describe('smsdrop end to end on PostgreSQL', { skip: postgresMissing() }, () => {
  const pg15 = usePostgres();
  const dirs: string[] = [];
  const daemons: Proc[] = [];
  after(async () => {
    for (const d of daemons) d.kill('SIGKILL');
    await Promise.all(daemons.map((d) => d.exited));
    dirs.forEach((d) => fs.rmSync(d, { recursive: true, force: true }));
  });
  function dir(): string {
    const made = tempDir('pg-e2e');
    dirs.push(made);
    return made;
  }

  test('send sends every valid number once; report and status read it back', async () => {
    const url = await pg15.cluster.freshDatabase();
    const work = dir();
    const sim = await startSimulatorProcess(work);
    after(() => sim.stop());
    const csv = path.join(work, 'contacts.csv');
    fs.writeFileSync(csv, contactsCsv(300, { bad: 2 }));
    const env = {
      ...CREDENTIALS,
      SMSDROP_BASE_URL: sim.url,
      SMSDROP_DATA_DIR: path.join(work, 'data'),
      SMSDROP_DATABASE_URL: url,
      SMSDROP_MAX_PER_REQUEST: '7',
    };
    const sent = await smsdrop(['send', csv, '--json'], env);
    assert.equal(sent.status, 3, `two invalid rows: exit 3\n${sent.stderr}`);
    assertEachOnce(sim.records(), numbersOf(300));
    const again = await smsdrop(['send', csv], env);
    assert.equal(again.status, 3, again.stderr);
    assertEachOnce(sim.records(), numbersOf(300));
    const report = await smsdrop(['report', 'contacts.csv', '--format', 'json'], env);
    assert.equal(report.status, 0, report.stderr);
    const line = JSON.parse(report.stdout) as Record<string, number>;
    assert.deepEqual([line.rows, line.accepted, line.invalid, line.pending], [302, 300, 2, 0]);
    const status = await smsdrop(['status', '--json'], env);
    assert.equal(status.status, 0, status.stderr);
    assert.ok(!fs.existsSync(path.join(work, 'data', 'journal.sqlite')), 'no SQLite journal');
  });

  test('retry --failed of a file sends again, other files in the repeat window checked', async () => {
    const url = await pg15.cluster.freshDatabase();
    const work = dir();
    const sim = await startSimulatorProcess(work);
    after(() => sim.stop());
    const env = {
      ...CREDENTIALS,
      SMSDROP_BASE_URL: sim.url,
      SMSDROP_DATA_DIR: path.join(work, 'data'),
      SMSDROP_DATABASE_URL: url,
    };
    const earlier = path.join(work, 'earlier.csv');
    fs.writeFileSync(earlier, contactsCsv(5)); // in the window: the look-up has groups to read
    assert.equal((await smsdrop(['send', earlier], env)).status, 0);
    const csv = path.join(work, 'unknown-template.csv');
    fs.writeFileSync(csv, 'phone,template,data1,data2\n13900000001,9,x,y\n');
    const sent = await smsdrop(['send', csv], env);
    assert.equal(sent.status, 3, `the template is unknown: the row fails\n${sent.stderr}`);
    const retried = await smsdrop(['retry', 'unknown-template.csv', '--failed', '--yes'], env);
    assert.equal(retried.status, 3, `sent again, failed again\n${retried.stderr}`);
    assert.doesNotMatch(retried.stderr, /E_INTERNAL|unexpected error/);
  });

  test('two daemons on one database, each with its own data directory', async () => {
    const url = await pg15.cluster.freshDatabase();
    const work = dir();
    const sim = await startSimulatorProcess(work);
    after(() => sim.stop());
    const nodes = ['a', 'b'].map((name) => ({ name, dataDir: path.join(work, name) }));
    for (const node of nodes)
      daemons.push(
        await startDaemon({
          dataDir: node.dataDir,
          simulator: sim,
          env: { SMSDROP_DATABASE_URL: url, SMSDROP_NODE_ID: node.name, SMSDROP_LEASE: '5s' },
        }),
      );
    fs.writeFileSync(path.join(nodes[0]!.dataDir, 'inbox', 'one.csv'), contactsCsv(200));
    fs.writeFileSync(
      path.join(nodes[1]!.dataDir, 'inbox', 'two.csv'),
      contactsCsv(200, { from: 200 }),
    );
    const done = (node: (typeof nodes)[number], name: string) =>
      fs.existsSync(path.join(node.dataDir, 'done', name));
    await waitUntil(
      () => done(nodes[0]!, 'one.csv') && done(nodes[1]!, 'two.csv'),
      120_000,
      'each file done in the data directory of the node that read it',
      () => daemons.map((d) => d.output()).join('\n---\n'),
    );
    assertEachOnce(sim.records(), numbersOf(400));
  });
});
