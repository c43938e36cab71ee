// Batches claimed by several nodes of one PostgreSQL journal (src/pgjournal/claims.ts), each node
// on its own connection: disjoint claims, none twice while leased, taken over once a lease passes.
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { after, describe, test } from 'node:test';
import type pg from 'pg';
import type { DueQuery } from '../../src/ports/index.js';
import {
  type Lease,
  claimDueBatches,
  releaseLeases,
  renewLeases,
} from '../../src/pgjournal/claims.js';
import { migratePostgres, openPool } from '../../src/pgjournal/schema.js';
import { postgresMissing, usePostgres } from './cluster.js';

const DUE = 30;
const NOT_DUE = 31;
const ACCEPTED = 32;
const OTHER_FILE = 33;

const SEED = `
  INSERT INTO files (id, sha256, name, size, encoding, status, created_at) VALUES
    (1, 'a', 'a.csv', 1, 'utf-8', 'sending', 't'), (2, 'b', 'b.csv', 1, 'utf-8', 'sending', 't');
  INSERT INTO groups (id, file_id, key_hash, app_id, template_id, datas) VALUES
    (1, 1, 1, 'app', '7', '["x","y"]'), (2, 2, 2, 'app', '7', '[]');
  INSERT INTO batches (id, file_id, group_id, req_id, numbers, state, next_attempt_at, created_at, updated_at)
    SELECT i, 1, 1, 'req' || i, 1, 'planned', 0, 't', 't' FROM generate_series(1, ${DUE}) i;
  INSERT INTO batches (id, file_id, group_id, req_id, numbers, state, next_attempt_at, created_at, updated_at) VALUES
    (${NOT_DUE}, 1, 1, 'later', 1, 'planned', 9000000000000000, 't', 't'),
    (${ACCEPTED}, 1, 1, 'done', 1, 'accepted', 0, 't', 't'),
    (${OTHER_FILE}, 2, 2, 'other', 1, 'planned', 0, 't', 't');
  INSERT INTO batch_numbers (batch_id, phones) SELECT id, '1380000' || id || ',1390000' || id FROM batches;
`;

const ALL_DUE = Array.from({ length: DUE }, (_, i) => i + 1);

function query(more: Partial<DueQuery> = {}): DueQuery {
  return { fileId: 1, now: Date.now(), afterId: 0, limit: 100, skip: new Set(), ...more };
}

async function claimIds(db: pg.Pool | pg.PoolClient, lease: Lease, more = {}): Promise<number[]> {
  const { first, due } = await claimDueBatches(db, lease, query(more));
  return [...first, ...due].map((b) => b.batch.id);
}

/** Waits until every lease of `node` has passed by the database's clock. */
async function leasesPassed(db: pg.Pool, node: string): Promise<void> {
  for (const deadline = Date.now() + 30_000; Date.now() < deadline; await sleep(50)) {
    const { rows } = await db.query<{ live: number }>(
      'SELECT count(*)::int AS live FROM batches WHERE lease_node = $1 AND lease_until > clock_timestamp()',
      [node],
    );
    if (rows[0]!.live === 0) return;
  }
  assert.fail(`the leases of ${node} did not pass within 30 s`);
}

describe('claiming batches under leases', { skip: postgresMissing() }, () => {
  const pg15 = usePostgres();
  /** Three nodes' pools on one fresh, migrated and seeded journal. */
  async function journal(): Promise<[pg.Pool, pg.Pool, pg.Pool]> {
    const url = await pg15.cluster.freshDatabase();
    const pools = [openPool(url, 3), openPool(url, 3), openPool(url, 3)] as const;
    for (const pool of pools) pool.on('error', () => undefined);
    after(() => Promise.all(pools.map((pool) => pool.end())));
    await migratePostgres(pools[0]);
    await pools[0].query(SEED);
    return [...pools];
  }
  const A: Lease = { node: 'host-a:1', ms: 60_000 };
  const B: Lease = { node: 'host-b:2', ms: 60_000 };

  test('a claim returns due planned batches of the file with what their requests need', async () => {
    const [one] = await journal();
    await one.query(`UPDATE batches SET send_first = true WHERE id IN (3, ${NOT_DUE})`);
    const { first, due, heldUntil } = await claimDueBatches(
      one,
      A,
      query({ afterId: 10, limit: 5, skip: new Set([12]) }),
    );
    assert.deepEqual(
      first.map((b) => b.batch.id),
      [3],
      'marked to go first and due (31 is not due)',
    );
    assert.deepEqual(
      due.map((b) => b.batch.id),
      [11, 13, 14, 15],
    );
    assert.deepEqual(
      { ...first[0], batch: { id: first[0]!.batch.id, req_id: first[0]!.batch.req_id } },
      {
        batch: { id: 3, req_id: 'req3' },
        appId: 'app',
        templateId: '7',
        datas: ['x', 'y'],
        phones: '13800003,13900003',
      },
    );
    assert.equal(first[0]!.batch.next_attempt_at, 0);
    assert.ok(!('lease_node' in first[0]!.batch), 'a BatchRecord, without the lease');
    assert.ok(heldUntil > performance.now());
  });

  test('nodes claiming at once get disjoint sets that cover every due batch', async () => {
    const [one, two, three] = await journal();
    const C: Lease = { node: 'host-c:3', ms: 60_000 };
    // Every node's first claim is made before any makes its second: otherwise, on a loaded
    // machine, the node whose connection opened first can claim all 30 before the others' first.
    let firstClaims = 0;
    let allClaimedOnce!: () => void;
    const claimedOnce = new Promise<void>((resolve) => (allClaimedOnce = resolve));
    /** One node's send loop: claims until nothing is left, never asking again for its own. */
    const node = async (db: pg.Pool, lease: Lease) => {
      const got: number[] = await claimIds(db, lease, { limit: 3 });
      if (++firstClaims === 3) allClaimedOnce();
      await claimedOnce;
      for (;;) {
        const ids = await claimIds(db, lease, { limit: 3, skip: new Set(got) });
        if (ids.length === 0) return got;
        got.push(...ids);
      }
    };
    const claims = await Promise.all([node(one, A), node(two, B), node(three, C)]);
    const all = claims.flat();
    assert.equal(
      new Set(all).size,
      all.length,
      `no batch claimed twice: ${JSON.stringify(claims)}`,
    );
    assert.deepEqual(
      all.sort((x, y) => x - y),
      ALL_DUE,
    );
    assert.ok(
      claims.every((ids) => ids.length > 0),
      `every node claimed some: ${claims.map((ids) => ids.length).join(', ')}`,
    );
  });

  test('a claim skips the batches another claim holds locked, without waiting', async () => {
    const [one, two] = await journal();
    const open = await one.connect();
    try {
      await open.query('BEGIN');
      const mine = await claimIds(open, A, { limit: 5 });
      assert.deepEqual(mine, [1, 2, 3, 4, 5]);
      // Not committed: the other node sees no lease yet, only the locks.
      assert.deepEqual(await claimIds(two, B, { limit: 5 }), [6, 7, 8, 9, 10]);
      await open.query('COMMIT');
    } finally {
      open.release();
    }
    assert.deepEqual(await claimIds(two, B), ALL_DUE.slice(5), 'its own again, not A’s');
  });

  test('no batch is claimed twice while its lease holds; its node may claim it again', async () => {
    const [one, two] = await journal();
    const a = await claimIds(one, A, { limit: 10 });
    const b = await claimIds(two, B);
    assert.deepEqual(b, ALL_DUE.slice(10));
    assert.deepEqual(await claimIds(two, B, { skip: new Set(b) }), [], 'nothing left for B');
    assert.deepEqual(await claimIds(one, A, { skip: new Set(a) }), [], 'nothing left for A');
    assert.deepEqual(await claimIds(one, A), a, 'A’s own leases, not B’s');
  });

  test('a lease that passed is taken over by another node; the first cannot renew it', async () => {
    const [one, two] = await journal();
    const short: Lease = { ...A, ms: 300 };
    const a = await claimIds(one, short, { limit: 4 });
    assert.deepEqual(await claimIds(two, B, { limit: 4 }), [5, 6, 7, 8]);
    await leasesPassed(one, A.node);
    assert.deepEqual(await claimIds(two, B, { limit: 4 }), a, 'taken over');
    assert.deepEqual((await renewLeases(one, short)).held, [], 'A holds nothing any more');
    assert.deepEqual(await claimIds(one, A, { limit: 4 }), [9, 10, 11, 12]);
    const { rows } = await one.query<{ n: number }>(
      'SELECT count(*)::int AS n FROM batches WHERE id = ANY($1) AND lease_node = $2',
      [a, B.node],
    );
    assert.equal(rows[0]!.n, a.length);
  });

  test('renewed leases outlast their first expiry; the node is seen', async () => {
    const [one, two] = await journal();
    const started = performance.now();
    const a = await claimIds(one, { ...A, ms: 5_000 }, { limit: 3 });
    const renewed = await renewLeases(one, A);
    assert.deepEqual(renewed.held, a);
    await sleep(Math.max(0, started + 5_500 - performance.now()));
    assert.deepEqual(await claimIds(two, B, { limit: 3 }), [4, 5, 6], 'A’s batches still held');
    const { rows } = await one.query<{ id: string }>('SELECT id FROM nodes');
    assert.deepEqual(
      rows.map((r) => r.id),
      [A.node],
    );
  });

  test('a released lease (an outcome, a clean stop) can be claimed at once', async () => {
    const [one, two] = await journal();
    const a = await claimIds(one, A, { limit: 4 });
    assert.deepEqual(await releaseLeases(one, B.node, a), [], 'only its own node releases');
    assert.deepEqual(await releaseLeases(one, A.node, [a[0]!]), [a[0]]);
    await one.query(
      "UPDATE batches SET state = 'accepted', lease_node = NULL, lease_until = NULL WHERE id = $1",
      [a[1]],
    );
    assert.deepEqual(await claimIds(two, B, { limit: 1 }), [a[0]], 'released, still planned');
    assert.deepEqual(await releaseLeases(one, A.node), [a[2], a[3]], 'all that A held');
    assert.deepEqual(await claimIds(two, B, { limit: 2, skip: new Set([a[0]!]) }), [a[2], a[3]]);
  });
});
