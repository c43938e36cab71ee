// The same bytes dropped into three nodes' inboxes at the same moment (copied under a hidden name
// into each, then renamed in each): one file in the journal, each number sent once, and every
// node's copy filed into its own done/ with the file's real outcomes. Real daemons, the simulator.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { after, describe, test } from 'node:test';
import { readRecordFile } from '../../src/simulator/record.js';
import { openPool } from '../../src/pgjournal/schema.js';
import {
  assertEachOnce,
  cleanEnv,
  contactsCsv,
  CREDENTIALS,
  numbersOf,
  type Proc,
  resultRows,
  startDaemon,
  startProcess,
  tempDir,
  waitUntil,
} from '../daemon/helpers.js';
import { postgresMissing, usePostgres } from './cluster.js';

const ROWS = 300;
const NODES = ['a', 'b', 'c'];

describe('the same bytes dropped into three nodes at once', { skip: postgresMissing() }, () => {
  const pg15 = usePostgres();
  const work = tempDir('pg-same-drop');
  const procs: Proc[] = [];
  after(async () => {
    for (const p of procs) p.kill('SIGKILL');
    await Promise.all(procs.map((p) => p.exited));
    fs.rmSync(work, { recursive: true, force: true });
  });

  test('read once, sent once, filed by every node with the real outcomes', async () => {
    const url = await pg15.cluster.freshDatabase();
    const recordFile = path.join(work, 'accepted.jsonl');
    const sim = startProcess(['simulate', '--record', recordFile], cleanEnv(CREDENTIALS));
    procs.push(sim);
    const simUrl = /listening on (\S+)/.exec(await sim.waitFor(/listening on (\S+)/))![1]!;
    const dirs = NODES.map((n) => path.join(work, n));
    for (const [i, node] of NODES.entries()) {
      const env = {
        ...CREDENTIALS,
        SMSDROP_BASE_URL: simUrl,
        SMSDROP_DATABASE_URL: url,
        SMSDROP_NODE_ID: node,
      };
      procs.push(await startDaemon({ dataDir: dirs[i]!, env }));
    }
    const csv = contactsCsv(ROWS);
    for (const dir of dirs) fs.writeFileSync(path.join(dir, 'inbox', '.same.csv'), csv);
    for (const dir of dirs)
      fs.renameSync(path.join(dir, 'inbox', '.same.csv'), path.join(dir, 'inbox', 'same.csv'));

    const results = dirs.map((dir) => path.join(dir, 'done', 'same.result.csv'));
    const output = () => procs.map((p) => p.output()).join('\n');
    await waitUntil(() => results.every((f) => fs.existsSync(f)), 180_000, 'every copy', output);
    assertEachOnce(readRecordFile(recordFile), numbersOf(ROWS));
    for (const file of results) {
      const statuses = resultRows(file).map((r) => r.status);
      assert.equal(statuses.length, ROWS, file);
      assert.deepEqual([...new Set(statuses)], ['accepted'], file);
    }
    const sql = openPool(url, 1);
    after(() => sql.end());
    const { rows } = await sql.query<{ status: string }>('SELECT status FROM files');
    assert.deepEqual(rows, [{ status: 'done' }], 'one file');
  });
});
