// Request pacing shared by every file in progress: at most `perSecond` request starts per second,
// spaced evenly (no bursts at second boundaries). 0 means no limit.
import { setTimeout as sleep } from 'node:timers/promises';

export interface RateLimiter {
  /** Resolves when the next request may start. */
  take(): Promise<void>;
}

export function createRateLimiter(perSecond: number): RateLimiter {
  if (!(perSecond > 0)) return { take: async () => {} };
  const spacingMs = 1000 / perSecond;
  let nextSlot = 0;
  return {
    async take() {
      const now = performance.now();
      const slot = Math.max(now, nextSlot);
      nextSlot = slot + spacingMs;
      if (slot > now) await sleep(slot - now);
    },
  };
}

/** Shared "stop sending for the account" switch: set by an account-fatal answer. */
export class AccountPause {
  reason: string | undefined;
  since: Date | undefined;
  pause(reason: string): void {
    if (this.reason) return;
    this.reason = reason;
    this.since = new Date();
  }
  resume(): void {
    this.reason = undefined;
    this.since = undefined;
  }
  get paused(): boolean {
    return this.reason !== undefined;
  }
}
