// Requests in flight, adapted to the provider: "too many concurrent requests" (111111, 111112,
// 111114) or "calls too close together" (111116) halves them, never below 1; then they grow
// back by one each time as many answers as are allowed in flight came without that complaint
// (additive increase, multiplicative decrease, as TCP does), never above the setting. The
// requests already in flight when it halves were started under the old level: their outcomes say
// nothing of the new one, and are not counted.
import type { LimitFunction } from 'p-limit';
import { CONCURRENCY_CODES } from '../provider/codes.js';
import type { SendOutcome } from '../provider/types.js';

export interface ConcurrencyChange {
  from: number;
  to: number;
  /** The status code that lowered it; undefined when it grew back. */
  statusCode?: string;
}

export class AdaptiveConcurrency {
  readonly #limit: Pick<LimitFunction, 'concurrency'>;
  readonly #max: number;
  readonly #onChange: ((change: ConcurrencyChange) => void) | undefined;
  /** Answers without a complaint since the level last changed. */
  #calm = 0;
  /** Outcomes still to come from requests started before the last halving. */
  #startedBefore = 0;

  constructor(
    limit: Pick<LimitFunction, 'concurrency'>,
    max: number,
    onChange?: (change: ConcurrencyChange) => void,
  ) {
    this.#limit = limit;
    this.#max = max;
    this.#onChange = onChange;
  }

  get current(): number {
    return this.#limit.concurrency;
  }

  /** Called with every request's outcome. */
  note(outcome: SendOutcome): void {
    if (this.#startedBefore > 0) {
      this.#startedBefore--;
      return;
    }
    if (outcome.kind === 'rejected' && CONCURRENCY_CODES.has(outcome.statusCode))
      return this.#halve(outcome.statusCode);
    if (outcome.kind === 'rejected' || outcome.kind === 'accepted') this.#growSlowly();
  }

  #halve(statusCode: string): void {
    const from = this.current;
    const to = Math.max(1, Math.floor(from / 2));
    this.#calm = 0;
    this.#startedBefore = from - 1; // the others in flight at most
    if (to === from) return;
    this.#limit.concurrency = to;
    this.#onChange?.({ from, to, statusCode });
  }

  #growSlowly(): void {
    const from = this.current;
    if (from >= this.#max || ++this.#calm < from) return;
    this.#calm = 0;
    this.#limit.concurrency = from + 1;
    this.#onChange?.({ from, to: from + 1 });
  }
}
