// Sending while a file is still being read. Intake releases each batch as it fills up (see
// journal/rows.ts); this sends what has been released and waits for the next release. It ends
// when reading ends (sendFile then takes over: the last, part-full batches and the retries) or
// when sending must stop, and never leaves a request of its own in flight.
import { type SendContext, sendReadyBatches } from './index.js';

export interface SendingWhileReading {
  /** Intake calls this after releasing a batch. */
  released(): void;
  /** Reading is over (finished or refused): sending stops once what it started is recorded. */
  end(): void;
  /** Settles when sending has stopped and its requests are recorded; rejects with what it threw. */
  done: Promise<void>;
}

export function sendWhileReading(ctx: SendContext, fileId: number): SendingWhileReading {
  let releases = 0;
  let seen = 0;
  let ended = false;
  let wake: (() => void) | undefined;
  const nudge = () => {
    wake?.();
    wake = undefined;
  };
  ctx.stopSignal?.addEventListener('abort', nudge, { once: true });

  /** Resolves true once a batch was released since the last look, false when reading is over. */
  const waitForMore = async (): Promise<boolean> => {
    while (!ended && !ctx.stopSignal?.aborted && releases === seen) await new Promise<void>((resolve) => (wake = resolve));
    seen = releases;
    return !ended && !ctx.stopSignal?.aborted;
  };
  const done = sendReadyBatches(ctx, fileId, waitForMore).finally(() => ctx.stopSignal?.removeEventListener('abort', nudge));
  done.catch(() => {}); // awaited by the caller once reading is over; not unhandled meanwhile
  return {
    done,
    released: () => {
      releases++;
      nudge();
    },
    end: () => {
      ended = true;
      nudge();
    },
  };
}
