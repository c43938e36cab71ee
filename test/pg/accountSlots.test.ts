// The account's request slots shared by several nodes (src/pgjournal/accountSlots.ts), each node
// on its own pool of one real PostgreSQL: never more requests held than the account's limit, a
// dead node's slots back after its lease, a renewing node's never, the level shared by all.
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { after, describe, test } from 'node:test';
import type pg from 'pg';
import { openAccountSlots } from '../../src/pgjournal/accountSlots.js';
import { migratePostgres, openPool } from '../../src/pgjournal/schema.js';
import type { AccountSlots } from '../../src/ports/account.js';
import { postgresMissing, usePostgres } from './cluster.js';

describe('the account slots nodes share', { skip: postgresMissing() }, () => {
  const pg15 = usePostgres();

  /** `n` pools on one fresh, migrated journal. */
  async function pools(n: number): Promise<pg.Pool[]> {
    return poolsOn(await pg15.cluster.freshDatabase(), n);
  }

  async function poolsOn(url: string, n: number): Promise<pg.Pool[]> {
    const made = Array.from({ length: n }, () => openPool(url, 4));
    for (const pool of made) pool.on('error', () => undefined);
    after(() => Promise.all(made.map((pool) => pool.end())));
    await migratePostgres(made[0]!);
    return made;
  }

  async function nodes(n: number, concurrency: number, leaseMs = 60_000): Promise<AccountSlots[]> {
    const opened: AccountSlots[] = [];
    for (const [i, pool] of (await pools(n)).entries())
      opened.push(await openAccountSlots(pool, { node: `node-${i}`, leaseMs, concurrency }));
    after(() => Promise.all(opened.map((slots) => slots.close())));
    return opened;
  }

  /** A node whose process dies holding slots: its connections go, nothing is given back. */
  async function killedHolding(url: string, slots: number, leaseMs: number): Promise<void> {
    const pool = openPool(url, 2);
    pool.on('error', () => undefined);
    const node = await openAccountSlots(pool, { node: 'killed', leaseMs, concurrency: 2 });
    for (let i = 0; i < slots; i++) assert.ok(await node.take());
    await pool.end(); // its renewals fail from now on, as a killed node's would never come
  }

  test('three nodes taking at once never hold more than the account allows', async () => {
    const three = await nodes(3, 4);
    let held = 0;
    let most = 0;
    const request = async (slots: AccountSlots, ms: number) => {
      const release = await slots.take();
      assert.ok(release);
      held++;
      most = Math.max(most, held);
      await sleep(ms);
      held--;
      release();
    };
    await Promise.all(
      Array.from({ length: 60 }, (_, i) => request(three[i % 3]!, 5 + ((i * 7) % 15))),
    );
    assert.equal(most, 4, 'the four slots were used, never a fifth');
  });

  test("a dead node's slots come back once their lease passes, not before", async () => {
    const url = await pg15.cluster.freshDatabase();
    const [pool] = await poolsOn(url, 1);
    const alive = await openAccountSlots(pool!, { node: 'alive', leaseMs: 1_500, concurrency: 2 });
    after(() => alive.close());
    await killedHolding(url, 2, 1_500);
    const waited = Date.now();
    const stop = new AbortController();
    const early = setTimeout(() => stop.abort(), 500);
    assert.equal(await alive.take(stop.signal), undefined, 'no slot while the leases hold');
    clearTimeout(early);
    const release = await alive.take();
    assert.ok(release, 'a slot, once a lease passed');
    assert.ok(Date.now() - waited >= 500);
    release();
  });

  test('a renewing node keeps its slots past their first lease', async () => {
    const [holding, other] = await nodes(2, 1, 600);
    const release = await holding!.take();
    assert.ok(release);
    const stop = new AbortController();
    setTimeout(() => stop.abort(), 2_000);
    assert.equal(await other!.take(stop.signal), undefined, 'held through three lease lengths');
    release();
    const next = await other!.take();
    assert.ok(next, 'free once given back');
    next();
  });

  test('a lowered level holds for every node; requests in flight keep their slots', async () => {
    const [a, b] = await nodes(2, 4);
    const inFlight = [await a!.take(), await a!.take(), await a!.take()];
    a!.concurrency = 2;
    assert.equal(a!.concurrency, 2);
    await sleep(100); // written in the background
    const stop = new AbortController();
    setTimeout(() => stop.abort(), 400);
    assert.equal(await b!.take(stop.signal), undefined, 'slot 3 is above the level');
    assert.equal(b!.concurrency, 2, 'read back by the other node');
    for (const release of inFlight) release!();
    await sleep(100);
    const one = await b!.take();
    const two = await b!.take();
    assert.ok(one && two);
    const stop2 = new AbortController();
    setTimeout(() => stop2.abort(), 300);
    assert.equal(await b!.take(stop2.signal), undefined, 'two at the lowered level');
    one();
    two();
  });
});
