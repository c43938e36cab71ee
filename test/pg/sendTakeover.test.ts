// Nodes of one PostgreSQL journal taking over each other's batches (src/pgjournal/sendStore.ts,
// leases.ts, sendTakeover.ts): a node that keeps renewing keeps its batches; one that stops loses
// them once its lease passes, and a batch it left `sending` is sent again under the same reqId.
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, test } from 'node:test';
import type { Outcome } from '../../src/ports/send.js';
import { listNodes } from '../../src/pgjournal/nodes.js';
import { postgresMissing, usePostgres } from './cluster.js';
import { attemptsOf, BATCHES, batchRow, claim, journal, leasesPassed } from './sendFixture.js';

const ALL = Array.from({ length: BATCHES }, (_, i) => i + 1);
const ids = (batches: { batch: { id: number } }[]) => batches.map((b) => b.batch.id);

describe('nodes taking over batches', { skip: postgresMissing() }, () => {
  const pg15 = usePostgres();

  test('a node that stops renewing loses its batches; its `sending` one is resent under the same reqId', async () => {
    const j = await journal(pg15.cluster);
    // A cannot renew (no keeper), as a node cut off from the database or dead.
    const a = await j.node({ node: 'a:1', leaseMs: 1_500 }, false);
    const b = await j.node({ node: 'b:2' });
    const mine = await claim(a.store);
    assert.deepEqual(ids(mine), ALL);
    const [attemptId] = await a.store.startAttempts([{ batch: mine[0]!.batch, reqId: 'req1' }]);
    assert.ok(attemptId);
    assert.deepEqual(ids(await claim(b.store)), [], 'A’s leases hold');
    await leasesPassed(j.sql, 'a:1');
    const taken = await claim(b.store);
    assert.deepEqual(ids(taken), ALL, 'every batch, the one left sending too');
    assert.equal(taken[0]!.batch.req_id, 'req1');
    assert.equal(taken[0]!.batch.maybe_sent, 1, 'in doubt: it may have been received');
    const [started] = await attemptsOf(j.sql, 1);
    assert.equal(taken[0]!.batch.first_doubt_at, started!.started_at);
    assert.equal(started!.outcome, 'interrupted');
    const [resent] = await b.store.startAttempts([{ batch: taken[0]!.batch, reqId: 'req1' }]);
    assert.ok(resent);
    assert.deepEqual(
      (await attemptsOf(j.sql, 1)).map((x) => x.req_id),
      ['', ''],
      'both carried the batch’s own req_id (journalRules/attempts.ts)',
    );
    // A, back, can neither record its old request (handed on, said) nor start another.
    const handedOn: string[] = [];
    a.store.whenHandedOn((what) => handedOn.push(what));
    const late: Outcome = {
      batchId: 1,
      transition: { to: 'unknown', statusCode: null, statusMsg: 'timeout' },
      attempt: { id: attemptId, result: { outcome: 'in-doubt', statusCode: null, reason: '' } },
    };
    await a.store.recordOutcomes([late]);
    assert.match(handedOn[0] ?? '', /batch 1\b.*no longer holds it.*b:2/);
    assert.deepEqual(await a.store.startAttempts([{ batch: mine[1]!.batch, reqId: 'req2' }]), [
      undefined,
    ]);
    const row = await batchRow(j.sql, 1);
    assert.deepEqual([row.state, row.lease_node], ['sending', 'b:2']);
    // The attempt is the claim's epoch: A's name on the lease again (claimed anew) does not make
    // its old request's outcome the batch's, since B's attempt started after it.
    await j.sql.query("UPDATE batches SET lease_node = 'a:1' WHERE id = 1");
    await a.store.recordOutcomes([late]);
    assert.match(handedOn[1] ?? '', /batch 1\b.*no longer holds it.*attempt \d+ started since/);
    assert.equal((await batchRow(j.sql, 1)).state, 'sending');
    assert.equal((await attemptsOf(j.sql, 1))[1]!.outcome, null, "B's attempt still open");
  });

  test('with reqId off, a batch a dead node left `sending` ends unknown, not resent', async () => {
    const j = await journal(pg15.cluster);
    const a = await j.node({ node: 'a:1', leaseMs: 1_500 }, false);
    const b = await j.node({ node: 'b:2', reqIdOn: false });
    const [first] = await claim(a.store, { limit: 1 });
    await a.store.startAttempts([{ batch: first!.batch, reqId: null }]);
    await leasesPassed(j.sql, 'a:1');
    assert.deepEqual(ids(await claim(b.store)), ALL.slice(1));
    const row = await batchRow(j.sql, 1);
    assert.deepEqual([row.state, row.lease_node], ['unknown', null]);
    assert.match(row.status_msg ?? '', /reqId is off/);
  });

  test('a node that renews keeps its batches past its first lease, and is seen', async () => {
    const j = await journal(pg15.cluster);
    const a = await j.node({ node: 'a:1', leaseMs: 900 });
    const b = await j.node({ node: 'b:2' });
    const mine = await claim(a.store, { limit: 5 });
    await sleep(2_500);
    assert.deepEqual(ids(await claim(b.store, { limit: 5 })), [6, 7, 8, 9, 10], 'not A’s');
    const [id] = await a.store.startAttempts([{ batch: mine[0]!.batch, reqId: 'req1' }]);
    assert.ok(id, 'A still starts attempts');
    const nodes = await listNodes(j.sql);
    assert.deepEqual(nodes.map((n) => [n.id, n.batchesHeld]).sort(), [
      ['a:1', 5],
      ['b:2', 5],
    ]);
    const seenA = nodes.find((n) => n.id === 'a:1')!;
    assert.ok(Date.parse(seenA.lastSeen) > Date.parse(seenA.startedAt), 'renewals mark it seen');
  });

  test('recoverInterrupted takes back what a dead node or this node’s previous life left, not a live node’s', async () => {
    const j = await journal(pg15.cluster);
    await j.sql.query(`
      UPDATE batches SET state = 'sending', attempts = 1 WHERE id IN (1, 2, 3, 4);
      UPDATE batches SET lease_node = 'live:1', lease_until = clock_timestamp() + interval '1 hour' WHERE id = 1;
      UPDATE batches SET lease_node = 'dead:1', lease_until = clock_timestamp() - interval '1 second' WHERE id = 2;
      UPDATE batches SET lease_node = 'a:1', lease_until = clock_timestamp() + interval '1 hour' WHERE id = 3;
      INSERT INTO attempts (batch_id, req_id, started_at)
        SELECT id, req_id, '2026-11-27T0' || id || ':00:00.000Z' FROM batches WHERE id IN (1, 2, 3, 4);`);
    const a = await j.node({ node: 'a:1' });
    assert.equal(await a.store.recoverInterrupted(1, true), 3);
    const rows = await Promise.all([1, 2, 3, 4].map((id) => batchRow(j.sql, id)));
    assert.deepEqual(
      rows.map((r) => [r.state, r.maybe_sent, r.first_doubt_at, r.lease_node, r.attempts]),
      [
        ['sending', 0, null, 'live:1', 1],
        ['planned', 1, '2026-11-27T02:00:00.000Z', null, 1],
        ['planned', 1, '2026-11-27T03:00:00.000Z', null, 1],
        ['planned', 1, '2026-11-27T04:00:00.000Z', null, 1],
      ],
    );
    const open = await j.sql.query<{ batch_id: number }>(
      'SELECT batch_id FROM attempts WHERE finished_at IS NULL',
    );
    assert.deepEqual(open.rows, [{ batch_id: 1 }]);
    assert.equal(await a.store.recoverInterrupted(1, false), 0, 'nothing left to take');
  });

  test('a batch in flight on this node is not taken back by its own claims', async () => {
    const j = await journal(pg15.cluster);
    const a = await j.node({ node: 'a:1' });
    const [first] = await claim(a.store, { limit: 1 });
    await a.store.startAttempts([{ batch: first!.batch, reqId: 'req1' }]);
    assert.deepEqual(ids(await claim(a.store, { skip: [1] })), ALL.slice(1));
    assert.equal(await a.store.recoverInterrupted(1, true), 0);
    assert.equal((await batchRow(j.sql, 1)).state, 'sending');
  });

  test('nextDueAt: a file whose batches another live node holds is not done, and looked at again within a second; one with none left is done', async () => {
    // The other node is helping: its requests end within the provider's latency, so the file is
    // looked at again long before a lease could pass, and filed soon after its last answer.
    const j = await journal(pg15.cluster);
    const a = await j.node({ node: 'a:1' });
    const b = await j.node({ node: 'b:2', leaseMs: 20_000 });
    assert.equal(await a.store.nextDueAt(1), 0);
    const held = await claim(b.store);
    await b.store.startAttempts([{ batch: held[0]!.batch, reqId: 'req1' }]);
    const before = Date.now();
    const at = await a.store.nextDueAt(1);
    assert.ok(at !== null && at > before && at <= Date.now() + 1_000, `${at} - ${before}`);
    await j.sql.query("UPDATE batches SET state = 'accepted', lease_node = NULL WHERE id > 1");
    await j.sql.query("UPDATE batches SET state = 'failed' WHERE id = 1");
    assert.equal(await a.store.nextDueAt(1), null);
  });
});
