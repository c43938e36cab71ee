// Sending while a file is still being read. Intake releases each batch as it fills up (see
// plan/planner.ts); this sends what has been released and waits for the next release. It ends
// when ctx.stopSignal aborts (the caller aborts it once reading is over; sendFile then takes
// over) or sending must stop otherwise, and never leaves a request of its own in flight.
import { type SendContext, sendReadyBatches } from './index.js';
import { onStop } from './sleep.js';

export interface SendingWhileReading {
  /** Intake calls this after releasing a batch. */
  released: () => void;
  /** True while no released batch is left to start and a request could start. */
  waiting: () => boolean;
  /** Settles when sending has stopped and its requests are recorded; rejects with what it threw. */
  done: Promise<void>;
}

export function sendWhileReading(ctx: SendContext, fileId: number): SendingWhileReading {
  let releases = 0;
  let seen = 0;
  let wake: (() => void) | undefined;
  const nudge = () => {
    wake?.();
    wake = undefined;
  };
  const forget = ctx.stopSignal ? onStop(ctx.stopSignal, nudge) : () => {};

  /** Resolves true once a batch was released since the last look, false once told to stop. */
  const waitForMore = async (): Promise<boolean> => {
    while (!ctx.stopSignal?.aborted && releases === seen)
      await new Promise<void>((resolve) => (wake = resolve));
    seen = releases;
    return !ctx.stopSignal?.aborted;
  };
  const done = sendReadyBatches(ctx, fileId, waitForMore).finally(forget);
  done.catch(() => {}); // awaited by the caller once reading is over; not unhandled meanwhile
  return {
    done,
    released: () => {
      releases++;
      nudge();
    },
    waiting: () => wake !== undefined,
  };
}
