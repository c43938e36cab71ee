// The SendStore port on PostgreSQL (src/pgjournal/sendStore.ts) for the writes around each request:
// one transaction per turn, attempts guarded by the batch and its lease, outcomes releasing it.
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, test } from 'node:test';
import type pg from 'pg';
import { leaseMargin } from '../../src/pgjournal/leases.js';
import { openPool } from '../../src/pgjournal/schema.js';
import { PgSendStore } from '../../src/pgjournal/sendStore.js';
import type { Outcome } from '../../src/ports/send.js';
import type { BatchToSend } from '../../src/ports/records.js';
import { postgresMissing, usePostgres } from './cluster.js';
import { attemptsOf, BATCHES, batchRow, claim, journal } from './sendFixture.js';

const ACCEPTED = {
  to: 'accepted',
  statusCode: '000000',
  smsMessageSid: 'sid',
  dateCreated: '20261127050000',
} as const;
const RESULT = { outcome: 'accepted', statusCode: '000000', reason: 'sid' };

/**
 * Runs `check` with a short lease and its margin (attempts stop `lease − margin` after a claim),
 * then with longer ones while it answers false: the machine was too slow for the times it needed
 * (a loaded machine took longer than lease − margin to start an attempt, or let the database's
 * lease pass), and nothing could be told from the run. An answer of true means it asserted.
 */
async function atALeaseLongEnough(
  check: (lease: { leaseMs: number; marginMs: number }, node: string) => Promise<boolean>,
): Promise<void> {
  const tried: number[] = [];
  for (const scale of [1, 2, 4, 8]) {
    const lease = { leaseMs: 3_000 * scale, marginMs: 1_900 * scale };
    if (await check(lease, `a:${scale}`)) return;
    tried.push(lease.leaseMs);
  }
  assert.fail(`too slow to tell at every lease tried (${tried.join(', ')} ms)`);
}

/** Waits until `ms` past `since` on the monotonic clock (the one leases.ts measures with). */
async function until(since: number, ms: number): Promise<void> {
  await sleep(Math.max(0, since + ms - performance.now()) + 20);
}

/** Whether the batch's lease has passed by the database's clock (not: released, or live). */
async function leasePassed(sql: pg.Pool, batchId: number): Promise<boolean> {
  const { rows } = await sql.query<{ passed: boolean }>(
    'SELECT coalesce(lease_until <= clock_timestamp(), false) AS passed FROM batches WHERE id = $1',
    [batchId],
  );
  return rows[0]!.passed;
}

/** Waits until a session waits for a row lock (the attempt's write, behind the test's lock). */
async function waitForLockWait(sql: pg.Pool): Promise<void> {
  for (const deadline = Date.now() + 30_000; Date.now() < deadline; await sleep(20)) {
    const { rows } = await sql.query<{ n: number }>(
      "SELECT count(*)::int AS n FROM pg_locks WHERE NOT granted AND locktype IN ('transactionid', 'tuple')",
    );
    if (rows[0]!.n > 0) return;
  }
  assert.fail('no write waited for the locked batch within 30 s');
}

/** Starts each batch's attempt, one call each, all in one turn. */
function startEach(store: PgSendStore, batches: BatchToSend[]): Promise<(number | undefined)[]> {
  return Promise.all(
    batches.map(
      async ({ batch }) => (await store.startAttempts([{ batch, reqId: batch.req_id }]))[0],
    ),
  );
}

describe('the PostgreSQL SendStore', { skip: postgresMissing() }, () => {
  const pg15 = usePostgres();

  test('two nodes claiming one file at once get disjoint batches that cover it', async () => {
    const j = await journal(pg15.cluster);
    const [a, b] = [await j.node({ node: 'a:1' }), await j.node({ node: 'b:2' })];
    // Both first claims end before either node claims again: on a loaded machine one node could
    // otherwise claim the whole file before the other's first claim ran.
    let firstClaims = 0;
    let bothClaimed: () => void;
    const both = new Promise<void>((resolve) => (bothClaimed = resolve));
    const loop = async (store: PgSendStore) => {
      const got: number[] = [];
      for (let first = true; ; first = false) {
        const ids = (await claim(store, { limit: 3, skip: got })).map((t) => t.batch.id);
        if (first && ++firstClaims === 2) bothClaimed();
        if (first) await both;
        if (ids.length === 0) return got;
        got.push(...ids);
      }
    };
    const [x, y] = await Promise.all([loop(a.store), loop(b.store)]);
    assert.equal(new Set([...x, ...y]).size, x.length + y.length, `${x.join()} / ${y.join()}`);
    assert.equal(x.length + y.length, BATCHES);
    assert.ok(x.length > 0 && y.length > 0, `both claimed some: ${x.length}, ${y.length}`);
  });

  test('batches marked to go first come first, and not again while claimed', async () => {
    const j = await journal(pg15.cluster);
    const { store } = await j.node({ node: 'a:1' });
    await j.sql.query('UPDATE batches SET send_first = true WHERE id = 15');
    const { first, due } = await store.claimDueBatches({
      fileId: 1,
      now: Date.now(),
      afterId: 0,
      limit: 3,
      skip: new Set(),
    });
    assert.deepEqual([first.map((b) => b.batch.id), due.map((b) => b.batch.id)], [[15], [1, 2]]);
    const again = await store.claimDueBatches({
      fileId: 1,
      now: Date.now(),
      afterId: 2,
      limit: 3,
      skip: new Set([1, 2, 15]),
    });
    assert.deepEqual(
      [again.first.map((b) => b.batch.id), again.due.map((b) => b.batch.id)],
      [[], [3, 4, 5]],
    );
  });

  test('a turn of attempts is one transaction, committed when they resolve; so is one of outcomes, which release the leases', async () => {
    const j = await journal(pg15.cluster);
    const { store } = await j.node({ node: 'a:1' });
    const batches = await claim(store, { limit: 10 });
    const ids = await startEach(store, batches);
    assert.ok(ids.every((id) => id !== undefined));
    const started = await j.sql.query<{ n: number; x: number }>(
      'SELECT count(*)::int AS n, count(DISTINCT xmin::text)::int AS x FROM attempts',
    );
    assert.deepEqual(
      started.rows[0],
      { n: 10, x: 1 },
      'visible to another connection, one transaction',
    );
    await Promise.all(
      batches.map(({ batch }, i) =>
        store.recordOutcomes([
          { batchId: batch.id, transition: ACCEPTED, attempt: { id: ids[i]!, result: RESULT } },
        ]),
      ),
    );
    const { rows } = await j.sql.query<{ n: number; x: number; leased: number }>(
      "SELECT count(*)::int AS n, count(DISTINCT xmin::text)::int AS x, count(lease_node)::int AS leased FROM batches WHERE state = 'accepted'",
    );
    assert.deepEqual(rows[0], { n: 10, x: 1, leased: 0 });
    const finished = await j.sql.query(
      "SELECT 1 FROM attempts WHERE outcome = 'accepted' AND finished_at IS NOT NULL",
    );
    assert.equal(finished.rowCount, 10);
  });

  test('a batch retried later is released with its outcome: another node claims it at once', async () => {
    const j = await journal(pg15.cluster);
    const [a, b] = [await j.node({ node: 'a:1' }), await j.node({ node: 'b:2' })];
    const [first] = await claim(a.store, { limit: 1 });
    const [id] = await a.store.startAttempts([{ batch: first!.batch, reqId: 'req1' }]);
    assert.deepEqual(await claim(b.store, { limit: 1 }).then((t) => t.map((x) => x.batch.id)), [2]);
    await a.store.recordOutcomes([
      {
        batchId: 1,
        transition: {
          to: 'planned',
          nextAttemptAt: 0,
          doubt: 1,
          statusCode: null,
          statusMsg: 'timeout',
        },
        attempt: { id: id!, result: { outcome: 'in-doubt', statusCode: null, reason: 'timeout' } },
      },
    ]);
    const row = await batchRow(j.sql, 1);
    const [attempt] = await attemptsOf(j.sql, 1);
    assert.deepEqual(
      {
        state: row.state,
        lease: row.lease_node,
        doubt: row.maybe_sent,
        since: row.first_doubt_at,
        attempts: row.attempts,
      },
      { state: 'planned', lease: null, doubt: 1, since: attempt!.started_at, attempts: 1 },
    );
    const taken = await claim(b.store, { skip: [2] });
    assert.equal(taken[0]?.batch.id, 1, 'released, so B takes it');
  });

  test('an attempt starts only for the same batch, still planned, whose lease this node holds', async () => {
    const j = await journal(pg15.cluster);
    const { store } = await j.node({ node: 'a:1' });
    const batches = await claim(store, { limit: 3 });
    await j.sql.query("UPDATE batches SET req_id = 'other' WHERE id = 1");
    await j.sql.query("UPDATE batches SET lease_node = 'b:2' WHERE id = 2"); // taken over meanwhile
    await j.sql.query(
      "UPDATE batches SET lease_until = clock_timestamp() - interval '1 second' WHERE id = 3",
    );
    assert.deepEqual(await startEach(store, batches), [undefined, undefined, undefined]);
    const { rows } = await j.sql.query("SELECT id FROM batches WHERE state = 'sending'");
    assert.deepEqual(rows, []);
    assert.equal((await j.sql.query('SELECT 1 FROM attempts')).rowCount, 0);
  });

  test('a node whose lease nears its end (no renewal) starts no attempt', async () => {
    const j = await journal(pg15.cluster);
    await atALeaseLongEnough(async (lease, node) => {
      // No keeper: a node that cannot renew. Attempts stop lease − margin after the claim.
      const { store } = await j.node({ node, ...lease }, false);
      const window = lease.leaseMs - lease.marginMs;
      const claimedFrom = performance.now();
      const [first, second] = await claim(store, { limit: 2 });
      const claimedBy = performance.now();
      const [started] = await store.startAttempts([{ batch: first!.batch, reqId: 'req1' }]);
      if (performance.now() >= claimedFrom + window) return false; // committed past the margin
      assert.ok(started, 'an attempt starts while the lease holds for longer than the margin');
      await until(claimedBy, window);
      assert.deepEqual(await store.startAttempts([{ batch: second!.batch, reqId: 'req2' }]), [
        undefined,
      ]);
      // The database's lease still held, so what refused the attempt was the margin.
      if (await leasePassed(j.sql, second!.batch.id)) return false;
      assert.equal((await batchRow(j.sql, second!.batch.id)).state, 'planned');
      assert.equal((await attemptsOf(j.sql, second!.batch.id)).length, 0);
      return true;
    });
  });

  test('an attempt whose commit ends too near the lease’s end is put back, not sent', async () => {
    const j = await journal(pg15.cluster);
    await atALeaseLongEnough(async (lease, node) => {
      const { store } = await j.node({ node, ...lease }, false);
      const window = lease.leaseMs - lease.marginMs;
      const claimedFrom = performance.now();
      const [first] = await claim(store, { limit: 1 });
      const claimedBy = performance.now();
      const id = first!.batch.id;
      const blocker = await j.sql.connect();
      try {
        await blocker.query('BEGIN');
        await blocker.query('SELECT 1 FROM batches WHERE id = $1 FOR UPDATE', [id]);
        // The first check of the margin runs as startAttempts is called.
        if (performance.now() >= claimedFrom + window) {
          await blocker.query('ROLLBACK');
          return false;
        }
        const started = store.startAttempts([{ batch: first!.batch, reqId: 'req1' }]);
        await waitForLockWait(j.sql);
        await until(claimedBy, window); // past heldUntil − margin
        await blocker.query('COMMIT');
        assert.deepEqual(await started, [undefined]);
      } finally {
        blocker.release();
      }
      const attempts = await attemptsOf(j.sql, id);
      // Nothing written: the database's lease had passed before the attempt's write.
      if (attempts.length === 0 && (await leasePassed(j.sql, id))) return false;
      const row = await batchRow(j.sql, id);
      assert.deepEqual(
        { state: row.state, attempts: row.attempts, doubt: row.maybe_sent, lease: row.lease_node },
        { state: 'planned', attempts: 0, doubt: 0, lease: null },
      );
      assert.deepEqual(
        attempts.map((a) => a.outcome),
        ['not-sent'],
      );
      return true;
    });
  });

  test('an outcome for a batch another node took over is refused and handed on, said; the turn’s others commit', async () => {
    const j = await journal(pg15.cluster);
    const { store } = await j.node({ node: 'a:1' });
    const handedOn: string[] = [];
    store.whenHandedOn((what) => handedOn.push(what));
    const batches = await claim(store, { limit: 3 });
    const ids = await startEach(store, batches);
    // B took batch 1 over and is sending it again
    await j.sql.query("UPDATE batches SET lease_node = 'b:2' WHERE id = 1");
    const outcome = (i: number): Outcome => ({
      batchId: i + 1,
      transition: ACCEPTED,
      attempt: { id: ids[i]!, result: RESULT },
    });
    const [lost, won] = await Promise.allSettled(
      [0, 1].map((i) => store.recordOutcomes([outcome(i)])),
    );
    assert.equal(lost?.status, 'fulfilled', 'handed on, not a failure of the file');
    assert.equal(won?.status, 'fulfilled');
    assert.equal(handedOn.length, 1);
    assert.match(handedOn[0]!, /batch 1\b.*accepted.*no longer holds it.*b:2/);
    assert.equal((await batchRow(j.sql, 1)).state, 'sending');
    assert.equal((await batchRow(j.sql, 1)).lease_node, 'b:2');
    assert.equal((await batchRow(j.sql, 2)).state, 'accepted');
    await store.recordOutcomes([outcome(2)]);
    await store.recordOutcomes([
      { batchId: 3, transition: { to: 'failed', statusCode: '160032', statusMsg: 'x' } },
    ]);
    assert.equal((await batchRow(j.sql, 3)).state, 'accepted');
    assert.match(handedOn[1]!, /batch 3\b.*failed.*no longer holds it \(accepted, no lease\)/);
  });

  test('a split moves the numbers and rows into two planned halves; a lone refused number is suppressed', async () => {
    const j = await journal(pg15.cluster);
    const { store } = await j.node({ node: 'a:1' });
    const [first] = await claim(store, { limit: 1 });
    const [id] = await store.startAttempts([{ batch: first!.batch, reqId: 'req1' }]);
    await store.recordOutcomes([
      {
        batchId: 1,
        transition: { to: 'split', statusCode: '160034', statusMsg: 'blacklisted' },
        attempt: {
          id: id!,
          result: { outcome: 'rejected:number', statusCode: '160034', reason: '' },
        },
      },
    ]);
    const { rows: halves } = await j.sql.query<{
      id: number;
      phones: string;
      req_id: string;
      rows: string;
    }>(
      `SELECT b.id, n.phones, b.req_id, (SELECT string_agg(phone, ',') FROM rows r WHERE r.batch_id = b.id) AS rows
       FROM batches b JOIN batch_numbers n ON n.batch_id = b.id WHERE b.parent_id = 1 AND b.state = 'planned' ORDER BY b.id`,
    );
    assert.deepEqual(
      halves.map((h) => [h.phones, h.rows]),
      [
        ['13800001', '13800001'],
        ['13900001', '13900001'],
      ],
    );
    assert.equal((await batchRow(j.sql, 1)).state, 'split');
    const half = (
      await claim(store, { skip: Array.from({ length: BATCHES }, (_, i) => i + 1) })
    )[0]!;
    assert.equal(half.batch.id, halves[0]!.id);
    const [halfAttempt] = await store.startAttempts([
      { batch: half.batch, reqId: half.batch.req_id },
    ]);
    await store.recordOutcomes([
      {
        batchId: half.batch.id,
        transition: { to: 'failed', statusCode: '160034', statusMsg: 'blacklisted' },
        attempt: {
          id: halfAttempt!,
          result: { outcome: 'rejected:number', statusCode: '160034', reason: '' },
        },
      },
    ]);
    const { rows } = await j.sql.query('SELECT phone, source FROM suppressed');
    assert.deepEqual(rows, [{ phone: '13800001', source: 'provider' }]);
  });
});

test('the margin outlasts the connect timeout; a lease too short for it is refused', () => {
  assert.equal(leaseMargin(30_000), 10_000);
  assert.equal(leaseMargin(30_000, 5_000), 10_000);
  assert.equal(leaseMargin(30_000, 12_000), 13_000);
  const pool = openPool('postgres://127.0.0.1:1/none');
  assert.throws(
    () =>
      new PgSendStore(pool, {
        node: 'a:1',
        leaseMs: 9_000,
        connectTimeoutMs: 5_000,
        reqIdOn: true,
      }),
    /SMSDROP_LEASE/,
  );
  assert.ok(
    new PgSendStore(pool, { node: 'a:1', leaseMs: 10_000, connectTimeoutMs: 5_000, reqIdOn: true }),
  );
  return pool.end();
});
