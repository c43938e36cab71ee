// Some tests need their whole run inside one provider day: batches in doubt become unknown at a
// day change, the simulator forgets reqIds at its own, and `retry` asks before resending
// yesterday's. The day is the product's own (sameProviderDay: Shanghai's and the host zone's).
import { setTimeout as sleep } from 'node:timers/promises';
import { sameProviderDay } from '../src/send/policy.js';

/** Waits until the next `withinMs` hold no day change (at most withinMs when one is due). */
export async function clearOfDayChange(withinMs: number): Promise<void> {
  while (!sameProviderDay(new Date(), new Date(Date.now() + withinMs))) await sleep(1_000);
}
