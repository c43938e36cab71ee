// What the nodes of a cluster say when one stops sending a file the others carry on: the stopped
// node (or `smsdrop send`) names the nodes that send its rows, the node that takes them up says
// so, its progress line counts the rows still to go in that file (not "0 to go"), and the reader
// that files it after a restart gives the file's time since it was taken, not its own run's. Real
// daemons and sends, the real simulator, a one-hour lease (the others take the batches because the
// stopped process gave them up).
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { after, describe, test } from 'node:test';
import {
  assertEachOnce,
  contactsCsv,
  daemonEnv,
  numbersOf,
  type Proc,
  startDaemon,
  startProcess,
  tempDir,
  waitUntil,
} from '../daemon/helpers.js';
import { postgresMissing, usePostgres } from './cluster.js';
import { nodeSettings, recordingSimulator } from './nodeSetup.js';

const ROWS = 600;

describe('a node or a send stopped mid-file on PostgreSQL', { skip: postgresMissing() }, () => {
  const pg15 = usePostgres();
  const work = tempDir('pg-stop-messages');
  const procs: Proc[] = [];
  after(async () => {
    for (const p of procs) p.kill('SIGKILL');
    await Promise.all(procs.map((p) => p.exited));
    fs.rmSync(work, { recursive: true, force: true });
  });

  async function cluster(name: string) {
    const url = await pg15.cluster.freshDatabase();
    const provider = await recordingSimulator(procs, path.join(work, `${name}.jsonl`), 50);
    const env = nodeSettings(provider, url, {
      SMSDROP_LEASE: '1h',
      SMSDROP_CONCURRENCY: '2',
      SMSDROP_PROGRESS_INTERVAL_MS: '1000',
    });
    const sent = provider.sent;
    const node = async (id: string) => {
      const proc = await startDaemon({ dataDir: path.join(work, name, id), env: env(id) });
      procs.push(proc);
      return proc;
    };
    return { env, sent, node, records: () => provider.records() };
  }

  test('SIGTERM to the reader: the other node sends the rest, and says so', async () => {
    const c = await cluster('daemons');
    const a = await c.node('a');
    const b = await c.node('b');
    const inbox = path.join(work, 'daemons', 'a', 'inbox');
    fs.writeFileSync(path.join(inbox, 'list.csv'), contactsCsv(ROWS));
    await waitUntil(() => /progress: /.test(a.output()), 120_000, 'a sending', a.output);
    a.kill('SIGTERM');
    await a.exited;
    assert.match(
      a.output(),
      /list\.csv: stopped with \d+ rows not sent yet; the other nodes \(b\) send them now/,
    );
    assert.doesNotMatch(a.output(), /list\.csv: stopped .*resumes at the next start/);

    await waitUntil(() => c.sent() >= ROWS, 120_000, 'b sending the rest', b.output);
    assert.match(b.output(), /sending batches of list\.csv \(file 1\), read by another node/);
    assert.match(
      b.output(),
      /progress: \d+ rows done, [1-9]\d* to go \([1-9]\d* of them in a file another node read/,
    );

    const again = await c.node('a');
    await again.waitFor(/finished list\.csv/, 60_000);
    assert.match(again.output(), /finished list\.csv: .* since taken \(this run \d+\.\d s\)/);
    assertEachOnce(c.records(), numbersOf(ROWS));
  });

  test('SIGTERM to `smsdrop send`: it names the daemons that carry on', async () => {
    const c = await cluster('send');
    const b = await c.node('b');
    const file = path.join(work, 'send', 'list.csv');
    fs.writeFileSync(file, contactsCsv(ROWS));
    const send = startProcess(
      ['send', file],
      daemonEnv({ dataDir: path.join(work, 'send', 's'), env: c.env('s') }),
    );
    procs.push(send);
    await waitUntil(() => c.sent() >= 20, 120_000, 'the send sending', send.output);
    send.kill('SIGTERM');
    await send.exited;
    assert.match(
      send.output(),
      /stopped here: the daemons of the other nodes \(b\) send its \d+ rows not sent yet/,
    );
    await waitUntil(() => c.sent() >= ROWS, 120_000, 'b sending the rest', b.output);
    assert.match(b.output(), /sending batches of list\.csv \(file 1\), read by another node/);
    assertEachOnce(c.records(), numbersOf(ROWS));
  });
});
