// Some tests need their whole run inside one provider day: batches in doubt become unknown at a
// day change, the simulator forgets reqIds at its own, and `retry` asks before resending
// yesterday's. A day changes at midnight in Shanghai (the provider's) and at midnight of the
// host's zone. A test that could straddle one waits for it to pass first (at most `withinMs`).
import { setTimeout as sleep } from 'node:timers/promises';

const SHANGHAI_OFFSET_MS = 8 * 3_600_000; // no daylight saving time

/** Milliseconds until the next midnight in Shanghai or in the host's zone, whichever comes first. */
export function msToNextDayChange(now = new Date()): number {
  const day = 86_400_000;
  const shanghai = day - ((now.getTime() + SHANGHAI_OFFSET_MS) % day);
  const localMidnight = new Date(now.getFullYear(), now.getMonth(), now.getDate() + 1).getTime() - now.getTime();
  return Math.min(shanghai, localMidnight);
}

/** Waits until no day change is due in the next `withinMs` (sleeping past one that is). */
export async function clearOfDayChange(withinMs: number): Promise<void> {
  const left = msToNextDayChange();
  if (left < withinMs) await sleep(left + 1_000);
}
