// Sending while a file is still being read. Intake releases each batch as it fills up (see
// journal/rows.ts); this loop sends what has been released, then sleeps until the next release.
// It ends when reading ends (sendFile then takes over: the last, part-full batches and the
// retries) or when sending must stop; it never leaves a request of its own in flight.
import { type SendContext, sendReadyBatches } from './index.js';

export interface Releases {
  /** Intake calls this after releasing a batch. */
  released(): void;
  /** Reading is over (finished or refused): the loop returns after its current pass. */
  end(): void;
}

export interface SendingWhileReading extends Releases {
  /** Settles once the loop has returned and its requests are recorded; rejects with what sending threw. */
  done: Promise<void>;
}

export function sendWhileReading(ctx: SendContext, fileId: number): SendingWhileReading {
  let releases = 0;
  let ended = false;
  let wake: (() => void) | undefined;
  const nudge = () => {
    wake?.();
    wake = undefined;
  };
  ctx.stopSignal?.addEventListener('abort', nudge, { once: true });

  const stopped = () => ended || ctx.stopSignal?.aborted === true || ctx.pause.paused;
  const loop = async (): Promise<void> => {
    while (!stopped()) {
      const seen = releases;
      await sendReadyBatches(ctx, fileId);
      // A release during the pass may have come after its last look: go round again at once.
      if (releases === seen && !stopped()) await new Promise<void>((resolve) => (wake = resolve));
    }
  };
  const done = loop().finally(() => ctx.stopSignal?.removeEventListener('abort', nudge));
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
