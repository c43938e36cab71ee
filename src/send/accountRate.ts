// The pacing limits of send/rate.ts held for every node sending on the account (ports/account.ts):
// each request start is reserved in the journal, for all nodes at once, then waited for here. The
// message window lets this node's requests through one at a time, in the order they asked, as
// rate.ts does; across nodes, whoever asks first when there is room goes first.
import type { AccountPacing, AccountRate, ReservedStart } from '../ports/account.js';
import { type RateLimiter, type RateLimits, type StartTicket, untilAborted } from './rate.js';
import { sleepUnlessStopped } from './sleep.js';

/** How long one wait for the window sleeps before it asks again (a number given back elsewhere). */
const LOOK_AGAIN_MS = 1_000;

/** `limits`, held through `rate` for every node together (startedBefore seeds the window). */
export function accountRateLimiter(limits: RateLimits, rate: AccountRate): RateLimiter {
  const window = limits.messageWindow;
  const pacing: AccountPacing = {
    requestMs: limits.requestsPerSecond ? 1000 / limits.requestsPerSecond : 0,
    messageMs: limits.messagesPerSecond ? 1000 / limits.messagesPerSecond : 0,
    windowMs: window?.ms ?? 0,
    windowMessages: window?.messages ?? 0,
  };
  if (!pacing.requestMs && !pacing.messageMs && !window)
    return { take: (_n, signal) => Promise.resolve(signal?.aborted ? undefined : NOTHING) };
  const queue = window ? new WindowQueue(rate, pacing, limits) : undefined;
  return {
    async take(numbers, signal) {
      const start = queue
        ? await queue.take(numbers, signal)
        : await rate.reserve(numbers, pacing).then((r) => (r.full ? undefined : r));
      if (!start) return undefined;
      if (start.waitMs > 0) await sleepUnlessStopped(start.waitMs, signal);
      if (!signal?.aborted) return start;
      start.giveBack(); // stopped while paced: it never left
      return undefined;
    },
  };
}

const NOTHING: StartTicket = { started: () => {}, giveBack: () => {} };

/** This node's requests asking the window, one at a time in order; the hold said once per hold. */
class WindowQueue {
  readonly #rate: AccountRate;
  readonly #pacing: AccountPacing;
  readonly #limits: RateLimits;
  #queue: Promise<unknown>;
  #waiters = 0;
  #holding = false;

  constructor(rate: AccountRate, pacing: AccountPacing, limits: RateLimits) {
    this.#rate = rate;
    this.#pacing = pacing;
    this.#limits = limits;
    this.#queue = Promise.resolve(limits.startedBefore ?? []).then((starts) =>
      starts.length > 0 ? rate.seedWindow(starts, pacing.windowMs) : undefined,
    );
  }

  take(numbers: number, signal?: AbortSignal): Promise<ReservedStart | undefined> {
    this.#waiters++;
    const turn = this.#queue
      .then(() => this.#admit(numbers, signal))
      .finally(() => this.#waiters--);
    this.#queue = turn.catch(() => {});
    return signal ? (untilAborted(turn, signal) as Promise<ReservedStart | undefined>) : turn;
  }

  async #admit(numbers: number, signal?: AbortSignal): Promise<ReservedStart | undefined> {
    for (;;) {
      if (signal?.aborted) {
        if (this.#holding && this.#waiters <= 1) this.#room();
        return undefined;
      }
      const got = await this.#rate.reserve(numbers, this.#pacing);
      if (!got.full) {
        if (this.#holding) this.#room();
        return got;
      }
      if (!this.#holding && got.waitMs >= LOOK_AGAIN_MS) {
        this.#holding = true;
        this.#limits.onWindowFull?.({
          window: this.#limits.messageWindow!.text,
          resumesAt: new Date(Date.now() + got.waitMs).toISOString(),
          waitMs: got.waitMs,
        });
      }
      await sleepUnlessStopped(Math.min(got.waitMs, LOOK_AGAIN_MS), signal);
    }
  }

  #room(): void {
    this.#holding = false;
    this.#limits.onWindowRoom?.();
  }
}
