// A node that stops dead longer than its lease (SIGSTOP: a long GC pause, a frozen VM) and then
// goes on: two `smsdrop run` daemons on one PostgreSQL journal, a file dropped into the first,
// which is stopped while it sends, with requests in flight. The second takes its batches over once
// its lease has passed and finishes the file. Woken, the first finds its claims gone: its late
// answers are handed on (logged), not a failure of the file, and it files the file into its done/
// with a result file that says what the journal holds (every row accepted), nothing in failed/.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { after, describe, test } from 'node:test';
import {
  assertEachOnce,
  contactsCsv,
  listDir,
  numbersOf,
  type Proc,
  resultRows,
  startDaemon,
  tempDir,
  waitUntil,
} from '../daemon/helpers.js';
import { postgresMissing, usePostgres } from './cluster.js';
import { nodeSettings, recordingSimulator } from './nodeSetup.js';

const ROWS = 200;
/** SMSDROP_LEASE: short, so that the pause outlasts it by far. */
const LEASE = '2s';

describe('a node paused longer than its lease', { skip: postgresMissing() }, () => {
  const pg15 = usePostgres();
  const work = tempDir('pg-node-pause');
  const procs: Proc[] = [];
  after(async () => {
    for (const p of procs) {
      p.kill('SIGCONT');
      p.kill('SIGKILL');
    }
    await Promise.all(procs.map((p) => p.exited));
    fs.rmSync(work, { recursive: true, force: true });
  });

  test('woken, it hands its lost batches on and files the file as done, once', async () => {
    const url = await pg15.cluster.freshDatabase();
    const provider = await recordingSimulator(procs, path.join(work, 'accepted.jsonl'), 300);
    // 300 ms an answer: the stop lands while requests wait for their answers
    const env = nodeSettings(provider, url, {
      SMSDROP_LEASE: LEASE,
      SMSDROP_CONCURRENCY: '4',
      SMSDROP_CONNECT_TIMEOUT_MS: '500',
    });
    const dirA = path.join(work, 'a');
    const a = await startDaemon({ dataDir: dirA, env: env('a') });
    procs.push(a);
    const b = await startDaemon({ dataDir: path.join(work, 'b'), env: env('b') });
    procs.push(b);
    fs.writeFileSync(path.join(dirA, 'inbox', 'list.csv'), contactsCsv(ROWS));
    const sent = provider.sent;
    await waitUntil(() => sent() >= 40, 120_000, 'a sending', a.output);
    a.kill('SIGSTOP');
    const atStop = sent();
    assert.ok(atStop < ROWS, `stopped mid-file (${atStop} of ${ROWS} sent)`);
    // b takes the stopped node's batches over once its leases pass, and finishes the file
    await waitUntil(() => sent() >= ROWS, 180_000, 'b finishing the file', b.output);
    a.kill('SIGCONT');
    // The result file is written before the list is moved beside it: both, or a failure.
    const filed = () =>
      ['list.csv', 'list.result.csv'].every((f) => listDir(path.join(dirA, 'done')).includes(f)) ||
      listDir(path.join(dirA, 'failed')).length > 0;
    await waitUntil(filed, 120_000, 'a, woken, filing the file', a.output);
    assert.deepEqual(listDir(path.join(dirA, 'failed')), [], a.output());
    assert.deepEqual(listDir(path.join(dirA, 'done')), ['list.csv', 'list.result.csv']);
    const statuses = resultRows(path.join(dirA, 'done', 'list.result.csv')).map((r) => r.status);
    assert.equal(statuses.length, ROWS);
    assert.deepEqual([...new Set(statuses)], ['accepted'], 'the result file says what was sent');
    assertEachOnce(provider.records(), numbersOf(ROWS));
    assert.doesNotMatch(a.output(), /E_UNEXPECTED|E_BATCH_TRANSITION/);
    // what it gave up is said: its requests in flight at the stop were answered too late
    assert.match(a.output(), /gave up batch \d+'s outcome .*handed on: .*no longer holds it/);
  });
});
