// Which node does what, as an operator sees it on a PostgreSQL journal: a one-shot `send` is not
// listed as a node (status, /metrics) though it leases what it claims; each attempt names the node
// that made it; status names the node reading each file in progress; a node that takes over a
// dead node's batches says so in one log line and a file.taken_over webhook event.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { after, describe, test } from 'node:test';
import pg from 'pg';
import { smsdrop } from '../cli/helpers.js';
import {
  assertEachOnce,
  contactsCsv,
  CREDENTIALS,
  httpUrlOf,
  numbersOf,
  type Proc,
  startDaemon,
  startSimulatorProcess,
  tempDir,
  waitUntil,
} from '../daemon/helpers.js';
import { startReceiver } from '../daemon/webhookReceiver.js';
import { postgresMissing, usePostgres } from './cluster.js';
import { nodeSettings, recordingSimulator } from './nodeSetup.js';

const SECRET = 'operator-nodes-secret';

describe('which node does what, on PostgreSQL', { skip: postgresMissing() }, () => {
  const pg15 = usePostgres();
  const work = tempDir('pg-operator-nodes');
  const procs: Proc[] = [];
  after(async () => {
    for (const p of procs) p.kill('SIGKILL');
    await Promise.all(procs.map((p) => p.exited));
    fs.rmSync(work, { recursive: true, force: true });
  });

  function journalSql(url: string): pg.Pool {
    const sql = new pg.Pool({ connectionString: url, max: 1 });
    sql.on('error', () => undefined);
    after(() => sql.end());
    return sql;
  }

  test('a one-shot send is no node of status or /metrics; its attempts name it', async () => {
    const url = await pg15.cluster.freshDatabase();
    const sim = await startSimulatorProcess(work);
    after(() => sim.stop());
    const daemonDir = path.join(work, 'daemon');
    const daemon = await startDaemon({
      dataDir: daemonDir,
      simulator: sim,
      env: { SMSDROP_DATABASE_URL: url, SMSDROP_NODE_ID: 'node-d', SMSDROP_HTTP: '127.0.0.1:0' },
    });
    procs.push(daemon);
    const csv = path.join(work, 'one-shot.csv');
    fs.writeFileSync(csv, contactsCsv(20));
    const sent = await smsdrop(['send', csv], {
      ...CREDENTIALS,
      SMSDROP_BASE_URL: sim.url,
      SMSDROP_DATA_DIR: path.join(work, 'sender'),
      SMSDROP_DATABASE_URL: url,
      SMSDROP_NODE_ID: 'one-shot',
    });
    assert.equal(sent.status, 0, sent.stderr);
    assertEachOnce(sim.records(), numbersOf(20));

    const status = await smsdrop(['status', '--json'], {
      SMSDROP_DATA_DIR: daemonDir,
      SMSDROP_DATABASE_URL: url,
    });
    assert.equal(status.status, 0, status.stderr);
    const nodes = (JSON.parse(status.stdout) as { nodes: Array<{ id: string }> }).nodes;
    assert.deepEqual(
      nodes.map((n) => n.id),
      ['node-d'],
    );
    const metrics = await (await fetch(`${httpUrlOf(daemon)}/metrics`)).text();
    assert.match(metrics, /^smsdrop_node_batches_held\{node="node-d"\} \d+$/m);
    assert.doesNotMatch(metrics, /node="one-shot"/);

    // the daemon helps with the send's batches (they are the account's): either may make one
    const sql = journalSql(url);
    const { rows } = await sql.query<{ node: string | null; n: number }>(
      'SELECT node, count(*)::int AS n FROM attempts GROUP BY node ORDER BY node',
    );
    assert.ok(rows.length > 0);
    for (const { node } of rows) assert.ok(node === 'one-shot' || node === 'node-d', `${node}`);
  });

  test("status names each file's reader; a node taking over a dead node's batches says so", async () => {
    const url = await pg15.cluster.freshDatabase();
    const provider = await recordingSimulator(procs, path.join(work, 'takeover.jsonl'), 50);
    // 50 ms an answer: the file takes seconds to send, so the kill lands mid-file
    const receiver = await startReceiver(SECRET);
    after(() => receiver.close());
    const env = nodeSettings(provider, url, {
      SMSDROP_LEASE: '3s',
      SMSDROP_CONCURRENCY: '4',
      SMSDROP_WEBHOOK_URL: receiver.url,
      SMSDROP_WEBHOOK_SECRET: SECRET,
    });
    const dirA = path.join(work, 'a');
    const dirB = path.join(work, 'b');
    const a = await startDaemon({ dataDir: dirA, env: env('a') });
    procs.push(a);
    const b = await startDaemon({ dataDir: dirB, env: env('b') });
    procs.push(b);
    const rows = 600;
    fs.writeFileSync(path.join(dirA, 'inbox', 'list.csv'), contactsCsv(rows));
    const sent = provider.sent;
    await waitUntil(() => sent() >= 40, 120_000, 'a sending', a.output);

    const status = await smsdrop(['status', '--json'], {
      SMSDROP_DATA_DIR: dirB,
      SMSDROP_DATABASE_URL: url,
    });
    assert.equal(status.status, 0, status.stderr);
    const files = (
      JSON.parse(status.stdout) as {
        files: Array<{ name: string; read_by?: string | null; batches_held_by?: unknown[] }>;
      }
    ).files;
    assert.equal(files.length, 1, status.stdout);
    assert.equal(files[0]!.read_by, 'a', status.stdout);
    assert.ok(Array.isArray(files[0]!.batches_held_by), status.stdout);
    const text = await smsdrop(['status'], { SMSDROP_DATA_DIR: dirB, SMSDROP_DATABASE_URL: url });
    assert.match(text.stdout, /^list\.csv \(id \d+\): read by a; /m, text.stdout);
    // the same from the other node's HTTP API, for the file list and the file
    const api = (await (await fetch(`${httpUrlOf(b)}/api/files`)).json()) as {
      files: Array<{ id: number; read_by?: string | null; batches_held_by?: unknown[] }>;
    };
    assert.equal(api.files[0]?.read_by, 'a', JSON.stringify(api));
    assert.ok(Array.isArray(api.files[0]?.batches_held_by), JSON.stringify(api));
    const one = (await (await fetch(`${httpUrlOf(b)}/api/files/${api.files[0].id}`)).json()) as {
      read_by?: string | null;
    };
    assert.equal(one.read_by, 'a', JSON.stringify(one));

    a.kill('SIGKILL');
    await a.exited;
    await waitUntil(() => sent() >= rows, 180_000, 'b finishing the file', b.output);
    assertEachOnce(provider.records(), numbersOf(rows));
    const line = /node b took over (\d+) batch\(es\) of list\.csv \(file \d+\) from node a\b/;
    assert.match(b.output(), line);
    await waitUntil(
      () => receiver.events.some((e) => e.event === 'file.taken_over'),
      60_000,
      'the file.taken_over event at the receiver',
      b.output,
    );
    const event = receiver.events.find((e) => e.event === 'file.taken_over')!;
    assert.equal(event.file?.name, 'list.csv');
    assert.match(event.reason ?? '', /^node b took over \d+ batch\(es\) from node a$/);
  });
});
