// Sending while a file is still being read. Intake releases each batch as it fills up (see
// plan/planner.ts); this sends what has been released and waits for the next release. Once
// reading is over and every batch released (finish), it goes on through what is due and ends
// when nothing is, so the requests in flight are not drained between reading and sending; the
// drain comes once, at the end of the file's requests (sendFile then sends what falls due later:
// retries). It ends early when ctx.stopSignal aborts (the caller aborts it when reading fails) or
// sending must stop otherwise, and never leaves a request of its own in flight.
import { type SendContext, sendReadyBatches } from './index.js';
import { onStop } from './sleep.js';

export interface SendingWhileReading {
  /** Intake calls this after releasing a batch. */
  released: () => void;
  /** True while no released batch is left to start and a request could start. */
  waiting: () => boolean;
  /** Reading is over and every batch released: what is due is sent, then sending ends. */
  finish: () => void;
  /** Settles when sending has stopped and its requests are recorded; rejects with what it threw. */
  done: Promise<void>;
}

export function sendWhileReading(ctx: SendContext, fileId: number): SendingWhileReading {
  let releases = 0;
  let seen = 0;
  let finished = false;
  let wake: (() => void) | undefined;
  const nudge = () => {
    wake?.();
    wake = undefined;
  };
  const forget = ctx.stopSignal ? onStop(ctx.stopSignal, nudge) : () => {};

  /**
   * Resolves true once a batch was released since the last look; false once told to stop, or once
   * reading is over with nothing released since (the last look found nothing due: it is all sent).
   */
  const waitForMore = async (): Promise<boolean> => {
    while (!ctx.stopSignal?.aborted && !finished && releases === seen)
      await new Promise<void>((resolve) => (wake = resolve));
    if (releases === seen) return false;
    seen = releases;
    return !ctx.stopSignal?.aborted;
  };
  /** Reading ended since the last page: the next one starts from the file's first batch. */
  let restart = false;
  const fromStart = () => {
    const now = restart;
    restart = false;
    return now;
  };
  const done = sendReadyBatches(ctx, fileId, { wait: waitForMore, fromStart }).finally(forget);
  done.catch(() => {}); // awaited by the caller once reading is over; not unhandled meanwhile
  return {
    done,
    released: () => {
      releases++;
      nudge();
    },
    waiting: () => wake !== undefined,
    finish: () => {
      finished = true;
      // The end of reading released the rest (saveOpenBatches), not told one by one: one more
      // look, from the first batch, so that the file's earlier batches go first, as their rows
      // come first in the result file.
      releases++;
      restart = true;
      nudge();
    },
  };
}
