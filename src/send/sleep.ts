// One wait for the sender's stages (retry delays, pacing, the windows): ended early by a stop.
import { setTimeout as sleep } from 'node:timers/promises';

/** Sleeps `ms`, or less when `signal` aborts: the caller looks at the signal afterwards. */
export async function sleepUnlessStopped(ms: number, signal?: AbortSignal): Promise<void> {
  await sleep(ms, undefined, signal ? { signal } : {}).catch(() => {});
}
