// The account's request slots shared by several nodes (src/pgjournal/accountSlots.ts), each node
// on its own pool of one real PostgreSQL: never more requests held than the account's limit, a
// dead node's slots back after its lease, a renewing node's never, a stopped node's and an
// unanswered request's not before the provider's hold, the level shared by all.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { after, describe, test } from 'node:test';
import type pg from 'pg';
import { openAccountSlots } from '../../src/pgjournal/accountSlots.js';
import { migratePostgres, openPool } from '../../src/pgjournal/schema.js';
import type { AccountSlots } from '../../src/ports/account.js';
import { postgresMissing, usePostgres } from './cluster.js';

const HOLDER = path.join(import.meta.dirname, '..', 'fixtures', 'pg', 'holdSlots.ts');

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

  async function nodes(
    n: number,
    concurrency: number,
    leaseMs = 60_000,
    holdMs = 0,
  ): Promise<AccountSlots[]> {
    const opened: AccountSlots[] = [];
    for (const [i, pool] of (await pools(n)).entries())
      opened.push(
        await openAccountSlots(pool, { node: `node-${i}`, leaseMs, concurrency, holdMs }),
      );
    after(() => Promise.all(opened.map((slots) => slots.close())));
    return opened;
  }

  /** A node's process holding `slots` slots (test/fixtures/pg/holdSlots.ts), killed at the end. */
  async function processHolding(url: string, slots: number, leaseMs: number, holdMs: number) {
    const args = [HOLDER, url, `${slots}`, `${leaseMs}`, `${holdMs}`];
    const child = spawn(process.execPath, ['--import', 'tsx', ...args], {
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    after(() => void child.kill('SIGKILL'));
    let output = '';
    await new Promise<void>((resolve, reject) => {
      child.stdout.on('data', (chunk: Buffer) => {
        output += chunk.toString();
        if (output.includes('held')) resolve();
      });
      child.once('exit', (code) => reject(new Error(`the holder exited (${code}): ${output}`)));
    });
    return child;
  }

  /** A node of its own on the journal at `url`. */
  async function nodeOn(url: string, leaseMs: number, holdMs: number): Promise<AccountSlots> {
    const [pool] = await poolsOn(url, 1);
    const node = await openAccountSlots(pool!, { node: 'alive', leaseMs, concurrency: 2, holdMs });
    after(() => node.close());
    return node;
  }

  /** A take that gives up after `ms`: the slot, or undefined. */
  async function takeWithin(slots: AccountSlots, ms: number) {
    const stop = new AbortController();
    const timer = setTimeout(() => stop.abort(), ms);
    try {
      return await slots.take(stop.signal);
    } finally {
      clearTimeout(timer);
    }
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
    const alive = await nodeOn(url, 1_500, 0);
    (await processHolding(url, 2, 1_500, 0)).kill('SIGKILL');
    const waited = Date.now();
    assert.equal(await takeWithin(alive, 500), undefined, 'no slot while the leases hold');
    const release = await alive.take();
    assert.ok(release, 'a slot, once a lease passed');
    assert.ok(Date.now() - waited >= 500);
    release();
  });

  test("a node stopped dead keeps its slots for the provider's hold, past their lease", async () => {
    // Its requests may still be open at the provider: their slots serve no other node before the
    // provider has surely ended them, however long the node is away.
    const url = await pg15.cluster.freshDatabase();
    const alive = await nodeOn(url, 500, 3_000);
    const stopped = await processHolding(url, 2, 500, 3_000);
    const waited = Date.now();
    stopped.kill('SIGSTOP');
    assert.equal(await takeWithin(alive, 2_000), undefined, 'held through four lease lengths');
    const release = await takeWithin(alive, 10_000);
    assert.ok(release, 'free once the hold passed, the node still stopped');
    assert.ok(Date.now() - waited >= 3_000);
    release();
  });

  test("an unanswered request's slot is held for the provider's hold; an answered one is not", async () => {
    const [a, b] = await nodes(2, 1, 60_000, 1_500);
    const answered = await a!.take();
    assert.ok(answered);
    answered('answered');
    const next = await takeWithin(b!, 1_000);
    assert.ok(next, 'free at once');
    const given = Date.now();
    next('unanswered');
    assert.equal(await takeWithin(a!, 1_000), undefined, 'the provider may still count it');
    const later = await takeWithin(a!, 10_000);
    assert.ok(later, 'free once the hold passed');
    assert.ok(Date.now() - given >= 1_500);
    later();
  });

  test('a slot whose renewals fail is no longer surely held once its lease passes', async () => {
    const pool = openPool(await pg15.cluster.freshDatabase(), 2);
    pool.on('error', () => undefined);
    await migratePostgres(pool);
    const node = await openAccountSlots(pool, {
      node: 'n',
      leaseMs: 1_500,
      concurrency: 1,
      holdMs: 0,
    });
    const slot = await node.take();
    assert.ok(slot);
    // past the take's lease: held only if a renewal (every 500 ms) went through meanwhile
    await sleep(1_700);
    assert.ok(slot.stillHeld(), 'renewed meanwhile');
    await pool.end(); // its renewals fail from now on, as a node's cut off from the database
    await sleep(1_700);
    assert.equal(slot.stillHeld(), false, 'its lease passed by its own clock');
    await node.close();
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
