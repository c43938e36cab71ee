// The account's slots held by nodes in blocks (src/pgjournal/accountSlots.ts): a node hands a
// slot from an answered request to its next one with no statement, and yet two nodes sending
// at once never have more requests at the provider than the account allows (the simulator's own
// count); a slot one node frees wakes the other through LISTEN/NOTIFY, not its polling.
import assert from 'node:assert/strict';
import { after, describe, test } from 'node:test';
import type pg from 'pg';
import { openAccountSlots, type PgAccountSlots } from '../../src/pgjournal/accountSlots.js';
import { migratePostgres, openPool } from '../../src/pgjournal/schema.js';
import { call, start, until } from '../simulator/helpers.js';
import { postgresMissing, usePostgres } from './cluster.js';

/** Long enough that no wait in these tests ends by polling. */
const NO_POLL_MS = 600_000;

describe('account slots held in blocks', { skip: postgresMissing() }, () => {
  const pg15 = usePostgres();

  async function pools(n: number): Promise<pg.Pool[]> {
    const url = await pg15.cluster.freshDatabase();
    const made = Array.from({ length: n }, () => openPool(url, 4));
    after(() => Promise.all(made.map((pool) => pool.end())));
    await migratePostgres(made[0]!);
    return made;
  }

  async function nodes(concurrency: number, fallbackPollMs?: number): Promise<PgAccountSlots[]> {
    const opened: PgAccountSlots[] = [];
    for (const [i, pool] of (await pools(2)).entries()) {
      const options = { node: `node-${i}`, leaseMs: 60_000, concurrency, holdMs: 0 };
      const poll = fallbackPollMs === undefined ? {} : { fallbackPollMs };
      const slots = await openAccountSlots(pool, { ...options, ...poll });
      opened.push(slots);
    }
    after(() => Promise.all(opened.map((slots) => slots.close())));
    return opened;
  }

  test('two nodes sending at once never exceed the account at the provider', async () => {
    const sim = await start({ latencyMs: [5, 15] });
    after(() => sim.close());
    const two = await nodes(4);
    /** One node's sender: `requests` requests, at most the account's concurrency of its own. */
    const sender = (slots: PgAccountSlots, requests: number) => {
      let left = requests;
      const worker = async () => {
        while (left-- > 0) {
          const release = await slots.take();
          assert.ok(release);
          try {
            assert.equal((await call(sim)).status, 200);
          } finally {
            release();
          }
        }
      };
      return Promise.all(Array.from({ length: 4 }, worker));
    };
    await Promise.all([sender(two[0]!, 60), sender(two[1]!, 60)]);
    assert.ok(sim.peakInFlight <= 4, `${sim.peakInFlight} requests at once at the simulator`);
    assert.ok(sim.peakInFlight >= 2, 'the nodes sent side by side');
    const stats = two.map((slots) => slots.stats);
    const handedOn = stats.reduce((sum, s) => sum + s.handedOn, 0);
    const taken = stats.reduce((sum, s) => sum + s.taken, 0);
    assert.ok(handedOn > 0, 'slots went from answer to request within a node');
    assert.equal(handedOn + taken, 120, 'every request had a slot, handed on or taken');
  });

  test("a slot one node frees wakes the other's waiting request by NOTIFY", async () => {
    const [a, b] = await nodes(2, NO_POLL_MS);
    const held = [await a!.take(), await a!.take()];
    assert.ok(held.every(Boolean), 'node-0 holds the whole account');
    let got = false;
    const waiting = b!.take().then((release) => {
      got = true;
      return release;
    });
    // node-1 found no slot and said so; node-0 heard it.
    await until(() => a!.stats.wantsHeard > 0);
    assert.equal(got, false);
    held[0]!();
    const release = await waiting;
    assert.ok(release, 'node-1 got the slot');
    assert.equal(b!.stats.wokenByNotice, 1, 'woken by the NOTIFY of the slot freed');
    assert.equal(b!.stats.wokenByPoll, 0);
    release();
    held[1]!();
  });

  test('a node reusing its slots learns of a pause another node set at once (NOTIFY)', async () => {
    // Its slots go from answer to request with no statement, and its renewals come every third
    // of a 60 s lease: only the pause's NOTIFY tells it within the second.
    const [a, b] = await nodes(2);
    const first = await a!.take();
    assert.ok(first);
    first(); // idle, kept for the next request here
    b!.pause.pause({ reason: 'provider outage', code: 'E_PROVIDER_ACCOUNT' }, 30_000);
    const told = Date.now();
    await until(() => a!.pause.inPause || Date.now() - told > 5_000);
    assert.ok(a!.pause.inPause, 'told within 5 s, long before its next renewal');
    assert.equal(await a!.take(), undefined, 'no request starts on a kept slot while paused');
    b!.pause.resume();
  });
});
