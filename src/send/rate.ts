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

/**
 * Shared "stop sending for the account" switch: set by an account-fatal answer, or by a burst
 * of requests in a row that got no business answer (provider down, 5xx, timeouts), so an outage
 * pauses the work in a resumable state instead of using up every batch's attempts.
 */
export class AccountPause {
  reason: string | undefined;
  since: Date | undefined;
  #troubleInARow = 0;

  /** pauseAfterTrouble: requests in a row without a business answer that pause sending; 0 = never. */
  constructor(private readonly pauseAfterTrouble = 0) {}

  /** A request got no business answer (not sent, in doubt, transient error). */
  noteTrouble(what: string): void {
    this.#troubleInARow++;
    if (this.pauseAfterTrouble > 0 && this.#troubleInARow >= this.pauseAfterTrouble) {
      this.pause(`the provider failed ${this.#troubleInARow} requests in a row (last: ${what}); check the network and the provider's status`);
    }
  }

  /** A request got a business answer: the provider is there. */
  noteAnswer(): void {
    this.#troubleInARow = 0;
  }

  pause(reason: string): void {
    if (this.reason) return;
    this.reason = reason;
    this.since = new Date();
  }
  resume(): void {
    this.reason = undefined;
    this.since = undefined;
    this.#troubleInARow = 0;
  }
  get paused(): boolean {
    return this.reason !== undefined;
  }
}
