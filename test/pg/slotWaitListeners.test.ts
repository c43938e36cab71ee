// Requests waiting for the account's slots (src/pgjournal/accountSlots.ts) all wait on the node's
// one stop signal, which lives as long as the daemon. A wait must neither leave a listener on it
// nor add one per waiter: after restarts, a dead node's slots stay held until its lease passes,
// every request of the live nodes waits meanwhile, and Node warned of a leak at the eleventh
// (MaxListenersExceededWarning: 11 abort listeners added to [AbortSignal]).
import assert from 'node:assert/strict';
import { getEventListeners } from 'node:events';
import { setTimeout as sleep } from 'node:timers/promises';
import { after, describe, test } from 'node:test';
import { openAccountSlots } from '../../src/pgjournal/accountSlots.js';
import { migratePostgres, openPool } from '../../src/pgjournal/schema.js';
import { postgresMissing, usePostgres } from './cluster.js';

/** The most abort listeners `signal` had at once, and how many it has now. */
function countListeners(signal: AbortSignal): { most: () => number; now: () => number } {
  let most = 0;
  const add = signal.addEventListener.bind(signal);
  signal.addEventListener = (...args: Parameters<AbortSignal['addEventListener']>) => {
    add(...args);
    most = Math.max(most, getEventListeners(signal, 'abort').length);
  };
  return { most: () => most, now: () => getEventListeners(signal, 'abort').length };
}

describe('waiting for the account slots', { skip: postgresMissing() }, () => {
  const pg15 = usePostgres();

  test('many waiters leave no listener on the stop signal, and Node warns of none', async () => {
    const warnings: string[] = [];
    const onWarning = (w: Error) => {
      if (w.name === 'MaxListenersExceededWarning') warnings.push(w.message);
    };
    process.on('warning', onWarning);
    after(() => process.off('warning', onWarning));

    const pool = openPool(await pg15.cluster.freshDatabase(), 4);
    pool.on('error', () => undefined);
    after(() => pool.end());
    await migratePostgres(pool);
    const slots = await openAccountSlots(pool, {
      node: 'n1',
      leaseMs: 60_000,
      concurrency: 1,
      holdMs: 0,
    });
    after(() => slots.close());
    const stop = new AbortController();
    const listeners = countListeners(stop.signal);

    const first = await slots.take(stop.signal);
    assert.ok(first);
    const waiters = Array.from({ length: 15 }, async () => {
      const release = await slots.take(stop.signal);
      assert.ok(release, 'a waiter got its slot');
      release(); // wakes the next
    });
    await sleep(1_000); // the waiters look for a slot again and again meanwhile
    first();
    await Promise.all(waiters);

    assert.ok(listeners.most() <= 1, `${listeners.most()} listeners at once on the stop signal`);
    assert.equal(listeners.now(), 0, 'no listener left once every waiter has its slot');
    await sleep(0); // a warning is emitted on the next tick
    assert.deepEqual(warnings, []);
  });
});
