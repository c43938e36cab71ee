// What the retry core needs: counting what a retry would resend, preparing it, and its outcome.
import type { Awaitable } from './awaitable.js';
import type {
  KeepsOwnReqId,
  PreparedRetry,
  RetryOutcome,
  RetryStatus,
  SentBeforeLookup,
  UnknownRule,
} from './records.js';
import { type BatchState, OUTCOME_STATES } from './states.js';

/** What a retry would resend: read only, so a reader (the checks before the lock) has it too. */
export interface RetryCounts {
  countUnknownByReqId(
    fileId: number,
    maxPerRequest: number,
    keepsOwnReqId: KeepsOwnReqId,
  ): Awaitable<{ ownReqId: number; newReqId: number }>;
  countRetryable(fileId: number, statuses: readonly RetryStatus[]): Awaitable<number>;
}

export interface RetryStore extends RetryCounts {
  prepareRetry(
    fileId: number,
    statuses: readonly RetryStatus[],
    maxPerRequest: number,
    unknown?: UnknownRule,
    sentBefore?: SentBeforeLookup,
  ): Awaitable<PreparedRetry>;
  retryOutcome(fileId: number, retry: PreparedRetry): Awaitable<RetryOutcome>;
}

/** Numbers in a batch's state (one batch's, or the sum of several), as both journals read them. */
export interface NumbersIn {
  state: string;
  n: number;
}

/** A retry's outcome from its batches' numbers: those not accepted, failed or unknown pending. */
export function tallyRetryOutcome(rows: number, numbers: readonly NumbersIn[]): RetryOutcome {
  const outcome: RetryOutcome = { rows, accepted: 0, failed: 0, unknown: 0, pending: 0 };
  for (const { state, n } of numbers)
    if (OUTCOME_STATES.includes(state as BatchState))
      outcome[state as 'accepted' | 'failed' | 'unknown'] += n;
    else outcome.pending += n;
  return outcome;
}
