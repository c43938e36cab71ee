// One wait for the sender's stages (retry delays, pacing, the windows): ended early by a stop.
//
// The stop signal is the process's (or a file's), and many requests wait on it at once: behind the
// rate limit, in a window, for the account's slots, each with a listener of its own that it takes
// off when its wait ends otherwise. Node takes an eleventh listener on one target for a leak
// (MaxListenersExceededWarning), so the owner of such a signal says how many waits it carries
// (manyWaitsOn); a listener left behind still shows, past that bound.
import { setMaxListeners } from 'node:events';

/** Waits one stop signal may carry at once: far more than the requests a sender runs. */
const STOP_WAITS = 1_000;

/** `signal`, which many waits listen on at once: Node's leak warning moved to STOP_WAITS. */
export function manyWaitsOn(signal: AbortSignal): AbortSignal {
  setMaxListeners(STOP_WAITS, signal);
  return signal;
}

/**
 * Calls `wake` once `signal` aborts (at once, if it has). Returns what takes the listener off: a
 * waiter that ended otherwise calls it.
 */
export function onStop(signal: AbortSignal, wake: () => void): () => void {
  if (signal.aborted) {
    wake();
    return () => {};
  }
  signal.addEventListener('abort', wake, { once: true });
  return () => signal.removeEventListener('abort', wake);
}

/** Sleeps `ms`, or less when `signal` aborts: the caller looks at the signal afterwards. */
export function sleepUnlessStopped(ms: number, signal?: AbortSignal): Promise<void> {
  if (signal?.aborted) return Promise.resolve();
  return new Promise((resolve) => {
    const done = () => {
      clearTimeout(timer);
      forget();
      resolve();
    };
    const timer = setTimeout(done, ms);
    const forget = signal ? onStop(signal, done) : () => {};
  });
}
