// The account's pacing and pause shared by several nodes (src/pgjournal/accountRate.ts,
// accountPause.ts, src/send/accountRate.ts), each node on its own pool of one real PostgreSQL:
// the rate limits count every node's starts together, the message window too, and a pause by one
// node holds the others until it lifts.
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { after, describe, test } from 'node:test';
import type pg from 'pg';
import { parseMessageWindow, type MessageWindow } from '../../src/config/settings/windows.js';
import { openAccountSlots } from '../../src/pgjournal/accountSlots.js';
import { migratePostgres, openPool } from '../../src/pgjournal/schema.js';
import type { AccountSlots } from '../../src/ports/account.js';
import { accountRateLimiter } from '../../src/send/accountRate.js';
import { AccountPause, type RateLimiter, type RateLimits } from '../../src/send/rate.js';
import { postgresMissing, usePostgres } from './cluster.js';

describe("the account's pacing and pause nodes share", { skip: postgresMissing() }, () => {
  const pg15 = usePostgres();

  /** `n` nodes, each on its own pool, on one fresh, migrated journal. */
  async function nodes(n: number, leaseMs = 60_000): Promise<AccountSlots[]> {
    const url = await pg15.cluster.freshDatabase();
    const pools: pg.Pool[] = Array.from({ length: n }, () => openPool(url, 4));
    for (const pool of pools) pool.on('error', () => undefined);
    await migratePostgres(pools[0]!);
    const opened: AccountSlots[] = [];
    for (const [i, pool] of pools.entries())
      opened.push(
        await openAccountSlots(pool, { node: `node-${i}`, leaseMs, concurrency: 4, holdMs: 0 }),
      );
    after(async () => {
      await Promise.all(opened.map((slots) => slots.close()));
      await Promise.all(pools.map((pool) => pool.end()));
    });
    return opened;
  }

  function window(text: string): MessageWindow {
    const parsed = parseMessageWindow(text);
    assert.ok(typeof parsed !== 'string', parsed as string);
    return parsed;
  }

  /** Each limiter starts requests of `numbers` numbers as fast as it is let, for `ms`. */
  async function startsFor(limiters: RateLimiter[], numbers: number, ms: number): Promise<number> {
    const stop = AbortSignal.timeout(ms);
    let starts = 0;
    await Promise.all(
      limiters.map(async (limiter) => {
        for (;;) {
          const ticket = await limiter.take(numbers, stop);
          if (!ticket) return;
          ticket.started();
          starts++;
        }
      }),
    );
    return starts;
  }

  const limitersOf = (three: AccountSlots[], limits: RateLimits) =>
    three.map((node) => accountRateLimiter(limits, node.rate));

  test('three nodes start no more requests per second than one may', async (t) => {
    const spanMs = 3_000;
    const starts = await startsFor(
      limitersOf(await nodes(3), { requestsPerSecond: 10 }),
      1,
      spanMs,
    );
    t.diagnostic(`${starts} starts in ${spanMs} ms`);
    // One node alone would start at most 10 a second, plus the one at the start; each node may
    // hold one reserved start when the span ends. A node each would make about 90.
    assert.ok(starts <= 10 * (spanMs / 1000) + 1 + 3, `${starts} starts in ${spanMs} ms`);
    assert.ok(starts >= 5, `${starts} starts: the limit let requests through`);
  });

  test('three nodes send no more numbers per second than one may', async (t) => {
    const spanMs = 3_000;
    // 20 numbers a second, 5 a request: 4 requests a second for all three nodes.
    const limiters = limitersOf(await nodes(3), { messagesPerSecond: 20 });
    const starts = await startsFor(limiters, 5, spanMs);
    t.diagnostic(`${starts} starts in ${spanMs} ms`);
    assert.ok(starts <= 4 * (spanMs / 1000) + 1 + 3, `${starts} starts in ${spanMs} ms`);
    assert.ok(starts >= 3, `${starts} starts: the limit let requests through`);
  });

  test("the message window counts every node's starts; a start given back frees its numbers", async () => {
    const three = await nodes(3);
    const held: string[] = [];
    const limiters = three.map((node, i) =>
      accountRateLimiter(
        { messageWindow: window('30/1h'), onWindowFull: () => held.push(`node-${i}`) },
        node.rate,
      ),
    );
    // 4 numbers a request: 7 requests (28 numbers) fit in 30, whichever nodes ask.
    const starts = await startsFor(limiters, 4, 2_500);
    assert.equal(starts, 7, 'seven requests of four numbers in a window of 30, across nodes');
    assert.ok(held.length > 0, 'a held node says so');
    const given = await limiters[0]!.take(2);
    assert.ok(given, 'two more numbers fit (28 + 2)');
    given.giveBack();
    await sleep(200); // the give-back is written in the background
    const again = await limiters[1]!.take(2, AbortSignal.timeout(5_000));
    assert.ok(again, 'another node takes the numbers given back');
  });

  test("a window is seeded once with the journal's recent starts", async () => {
    const [a, b] = await nodes(2);
    const startedBefore = [{ at: Date.now() - 1_000, numbers: 26 }];
    const limits = { messageWindow: window('30/1h'), startedBefore };
    const limiterA = accountRateLimiter(limits, a!.rate);
    const limiterB = accountRateLimiter(limits, b!.rate);
    assert.ok(await limiterA.take(4), '26 + 4 fit in 30');
    const none = await limiterB.take(4, AbortSignal.timeout(1_500));
    assert.equal(none, undefined, 'no room: the seed counted once, and node a start counted');
  });

  test('a pause by one node holds the others, and its end lets them go on', async () => {
    const [a, b, idle] = await nodes(3, 600); // the idle node learns at a renewal (200 ms)
    const pauseA = new AccountPause(0, { pause: a!.pause, holdMs: 60_000 });
    const pauseB = new AccountPause(0, { pause: b!.pause, holdMs: 60_000 });
    const pauseIdle = new AccountPause(0, { pause: idle!.pause, holdMs: 60_000 });
    pauseA.pause('the account has no balance left', 'E_PROVIDER_BALANCE', '111142');
    await until(async () => {
      const slot = await b!.take(AbortSignal.timeout(2_000));
      slot?.();
      return slot === undefined && pauseB.paused;
    }, 'node b sees the pause when it takes a slot');
    assert.equal(pauseB.code, 'E_PROVIDER_BALANCE');
    assert.equal(pauseB.statusCode, '111142');
    assert.match(pauseB.reason!, /no balance left \(paused by node node-0\)/);
    await until(() => pauseIdle.paused, 'a node that sends nothing sees it at a renewal');
    const cooling = Date.now();
    const cooldownB = pauseB.cooldown(60_000);
    pauseA.resume(); // node a's cooldown is over: every node tries again
    await cooldownB;
    assert.ok(Date.now() - cooling < 30_000, 'node b went on when node a did, not a minute later');
    assert.equal(pauseB.paused, false);
    assert.equal(pauseB.outage, undefined, "node b's outage was node a's");
    await until(() => !pauseIdle.paused, 'the idle node too');
    const slot = await b!.take(AbortSignal.timeout(5_000));
    assert.ok(slot, 'node b takes slots again');
    slot();
  });

  test('a pause renewed at once (the trial failed) keeps the others paused', async () => {
    const [a, b] = await nodes(2);
    const pauseA = new AccountPause(0, { pause: a!.pause, holdMs: 60_000 });
    const pauseB = new AccountPause(0, { pause: b!.pause, holdMs: 60_000 });
    pauseA.pause('the account has no balance left', 'E_PROVIDER_BALANCE', '111142');
    await until(async () => {
      await b!.take(AbortSignal.timeout(300)).then((slot) => slot?.());
      return pauseB.paused;
    }, 'node b sees the pause');
    pauseA.resume();
    pauseA.pause('the account has no balance left', 'E_PROVIDER_BALANCE', '111142');
    await sleep(2_500); // node b looks every second
    assert.equal(pauseB.paused, true, 'node b is in the newer pause, not lifted');
    pauseA.resume();
    await until(() => !pauseB.paused, 'lifted with the newer pause');
  });

  test("no answer from the provider pauses that node only: the others' slots are still given", async () => {
    const [a, b] = await nodes(2);
    const pauseA = new AccountPause(0, { pause: a!.pause, holdMs: 60_000 });
    const pauseB = new AccountPause(0, { pause: b!.pause, holdMs: 60_000 });
    pauseA.pause('the provider failed 5 requests in a row', 'E_PROVIDER_UNREACHABLE');
    assert.ok(pauseA.paused && pauseA.local);
    const slot = await b!.take(AbortSignal.timeout(5_000));
    assert.ok(slot, 'node b still gets a slot');
    slot();
    assert.equal(pauseB.paused, false);
  });

  test('a pause whose node died lapses after its cooldown', async () => {
    const [a, b] = await nodes(2);
    const pauseA = new AccountPause(0, { pause: a!.pause, holdMs: 1_500 });
    const pauseB = new AccountPause(0, { pause: b!.pause, holdMs: 1_500 });
    pauseA.pause('the account has no balance left', 'E_PROVIDER_BALANCE', '111142');
    await until(async () => {
      await b!.take(AbortSignal.timeout(300)).then((slot) => slot?.());
      return pauseB.paused;
    }, 'node b sees the pause');
    await a!.close(); // node a never resumes: its pause holds for its cooldown, then lapses
    await pauseB.cooldown(60_000);
    assert.equal(pauseB.paused, false, 'lifted once the cooldown of node a passed');
  });
});

/** Polls `ok` until it holds, or fails after a time sized for a loaded machine. */
async function until(ok: () => boolean | Promise<boolean>, what: string): Promise<void> {
  const deadline = Date.now() + 20_000;
  while (!(await ok())) {
    assert.ok(Date.now() < deadline, `not seen in 20 s: ${what}`);
    await sleep(50);
  }
}
