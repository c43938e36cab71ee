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
