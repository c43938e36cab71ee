// The core of `smsdrop retry`: an explicit resend of a file's failed and/or unknown rows. Their
// numbers move to new batches with fresh reqIds (src/journal/retry.ts), which the normal sender
// sends; the old batches keep their outcome and attempts. Unknown batches the provider can still
// recognise by their reqId (same day, every attempt carried it: send/policy.ts
// mayResendWithOwnReqId) keep it, so a repeat is refused (160054, counted as accepted).
import type { Config } from '../config/index.js';
import type {
  FileCounts,
  FileStore,
  KeepsOwnReqId,
  PreparedRetry,
  ReadStore,
  RetryOutcome,
  RetryStatus,
  RetryStore,
  WaitingFile,
} from '../ports/index.js';
import { FILE_STATUS } from '../ports/states.js';
import { type SendContext, type SendResult, sendFile } from '../send/index.js';
import { mayResendWithOwnReqId } from '../send/policy.js';
import { timedRun } from './runs.js';

/** The journal's ports a retry works through. */
export interface RetryStores {
  files: Pick<FileStore, 'status' | 'counts' | 'waitingRepeats' | 'runStarted' | 'runEnded'>;
  reads: Pick<ReadStore, 'sentBefore'>;
  retry: Pick<RetryStore, 'prepareRetry' | 'retryOutcome'>;
}

export interface RetryResult {
  retry: PreparedRetry;
  /** How sending ended; undefined when there was nothing to resend. */
  sent?: SendResult;
  /** Where the retried rows stand now. */
  outcome: RetryOutcome;
  counts: FileCounts;
  elapsedMs: number;
}

/**
 * Resends the file's rows in `statuses`; the file is done again once every batch is final.
 * newReqIdsForUnknown: whether unknown rows that cannot keep their reqId may go under new ones.
 */
export async function retryRows(
  ctx: SendContext,
  stores: RetryStores,
  fileId: number,
  statuses: readonly RetryStatus[],
  newReqIdsForUnknown = true,
): Promise<RetryResult> {
  const started = Date.now();
  const unknown = { keepsOwnReqId: ownReqIdRule(ctx.config), newReqIds: newReqIdsForUnknown };
  // Numbers another file sent the same message to since are not resent (journal/retry.ts).
  const sentBefore = ctx.config.repeatWindow
    ? await stores.reads.sentBefore(fileId, ctx.config.repeatWindow)
    : undefined;
  const retry = await stores.retry.prepareRetry(
    fileId,
    statuses,
    ctx.config.maxPerRequest,
    unknown,
    sentBefore,
  );
  let sent: SendResult | undefined;
  if (retry.rows > 0)
    sent = await timedRun(stores, fileId, async () => {
      const outcome = await sendFile(ctx, fileId);
      if (outcome.state === 'finished') await stores.files.status(fileId, FILE_STATUS.done);
      return outcome;
    });
  return {
    retry,
    ...(sent ? { sent } : {}),
    outcome: await stores.retry.retryOutcome(fileId, retry),
    counts: await stores.files.counts(fileId),
    elapsedMs: Date.now() - started,
  };
}

/** Whether an unknown batch keeps its reqId if retried now (see mayResendWithOwnReqId). */
export function ownReqIdRule(config: Config, now = new Date()): KeepsOwnReqId {
  const settings = { reqIdOn: config.reqId, timezone: config.timezone };
  return (history) => mayResendWithOwnReqId(history, now, settings);
}

/**
 * The file's repeats whose number another file holds but has not sent. With the data-directory
 * lock held by the caller, nothing sends them now (a file paused, stopped, or cut short), so the
 * file is not done.
 */
export async function heldRepeats(
  files: Pick<FileStore, 'waitingRepeats'>,
  fileId: number,
  counts: FileCounts,
): Promise<WaitingFile[]> {
  return counts.repeats > 0 ? await files.waitingRepeats(fileId) : [];
}
