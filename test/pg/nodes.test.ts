// The nodes sharing one PostgreSQL journal as `smsdrop status` (text and JSON) and /metrics show
// them: each node's id, when it started and was last seen, and the batches it holds; a node gone
// for over an hour and holding nothing is no longer listed. With SQLite there are none.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, describe, test } from 'node:test';
import { createMetrics } from '../../src/http/metrics.js';
import { openScratch } from '../../src/journals/index.js';
import { pgReadStore } from '../../src/pgjournal/readStore.js';
import { migratePostgres, openPool } from '../../src/pgjournal/schema.js';
import { readStatus, renderStatus } from '../../src/report/status.js';
import { postgresMissing, usePostgres } from './cluster.js';

const SEED = `
  INSERT INTO files (id, sha256, name, size, encoding, status, created_at)
    VALUES (1, 'a', 'a.csv', 1, 'utf-8', 'sending', 't');
  INSERT INTO groups (id, file_id, key_hash, app_id, template_id, datas)
    VALUES (1, 1, 1, 'app', '7', '[]');
  INSERT INTO batches (id, file_id, group_id, req_id, numbers, state, next_attempt_at, created_at, updated_at, lease_node, lease_until)
    SELECT i, 1, 1, 'req' || i, 1, 'planned', 0, 't', 't',
      CASE WHEN i <= 3 THEN 'host-a:1' WHEN i = 4 THEN 'host-b:2' ELSE 'host-c:3' END,
      CASE WHEN i <= 4 THEN clock_timestamp() + interval '1 minute' ELSE clock_timestamp() - interval '1 minute' END
    FROM generate_series(1, 5) i;
  INSERT INTO nodes (id, started_at, last_seen) VALUES
    ('host-a:1', clock_timestamp() - interval '5 minutes', clock_timestamp() - interval '2 seconds'),
    ('host-b:2', clock_timestamp() - interval '3 hours', clock_timestamp() - interval '2 hours'),
    ('host-c:3', clock_timestamp() - interval '3 hours', clock_timestamp() - interval '2 hours');
`;

describe('the nodes in status and /metrics', { skip: postgresMissing() }, () => {
  const pg15 = usePostgres();
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'smsdrop-nodes-'));
  after(() => fs.rmSync(dataDir, { recursive: true, force: true }));

  async function reads() {
    const pool = openPool(await pg15.cluster.freshDatabase(), 2);
    pool.on('error', () => undefined);
    after(() => pool.end());
    await migratePostgres(pool);
    await pool.query(SEED);
    return pgReadStore(pool);
  }

  test('status lists the living and the lately seen, and those holding batches', async () => {
    const status = await readStatus(await reads(), dataDir);
    assert.deepEqual(
      status.nodes.map((n) => [n.id, n.batches_held]),
      [
        ['host-a:1', 3],
        ['host-b:2', 1], // gone two hours, but its lease on one batch has not passed
      ],
      'host-c:3, gone and its lease passed, is not listed',
    );
    const a = status.nodes[0]!;
    assert.ok(a.seen_seconds_ago >= 1 && a.seen_seconds_ago < 60, `${a.seen_seconds_ago}`);
    assert.ok(Date.parse(a.started_at) < Date.parse(a.last_seen));
    const text = renderStatus(status, 'UTC');
    assert.match(text, /^nodes {6}2 sharing the journal/m);
    assert.match(text, /host-a:1 .* 3\b/);
    assert.match(text, /host-b:2 .*2 h 0 min ago .* 1 /);
  });

  test("/metrics has a node's last seen time and the batches it holds, read once a scrape", async () => {
    const store = await reads();
    let nodeReads = 0;
    const counted = new Proxy(store, {
      get(target, key, receiver) {
        if (key !== 'nodes') return Reflect.get(target, key, receiver) as unknown;
        return (withinMs: number) => {
          nodeReads++;
          return target.nodes(withinMs);
        };
      },
    });
    const metrics = createMetrics({
      reads: counted,
      inProgress: new Set<number>(),
      pausedCode: () => undefined,
    });
    const text = await metrics.registry.metrics();
    assert.match(text, /^smsdrop_node_batches_held\{node="host-a:1"\} 3$/m);
    assert.match(text, /^smsdrop_node_batches_held\{node="host-b:2"\} 1$/m);
    assert.doesNotMatch(text, /host-c:3/);
    const seen = /^smsdrop_node_last_seen_timestamp_seconds\{node="host-a:1"\} (\S+)$/m.exec(text);
    assert.ok(seen);
    assert.ok(Math.abs(Number(seen[1]) - Date.now() / 1000) < 60);
    assert.equal(nodeReads, 1, 'both node gauges show one read of the nodes');
    await metrics.registry.metrics();
    assert.equal(nodeReads, 2, 'the next scrape reads them afresh');
  });

  test('with the SQLite journal there are no nodes, and no node line', async () => {
    const scratch = await openScratch(path.join(dataDir, 'scratch.sqlite'));
    try {
      const status = await readStatus(scratch.reads, dataDir);
      assert.deepEqual(status.nodes, []);
      assert.doesNotMatch(renderStatus(status), /^nodes/m);
      const metrics = createMetrics({
        reads: scratch.reads,
        inProgress: new Set<number>(),
        pausedCode: () => undefined,
      });
      assert.doesNotMatch(await metrics.registry.metrics(), /^smsdrop_node_\w+\{/m);
    } finally {
      await scratch.close();
    }
  });
});
