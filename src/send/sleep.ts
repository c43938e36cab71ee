// One wait for the sender's stages (retry delays, pacing, the windows): ended early by a stop.
//
// The stop signal is the process's (or a file's), and many requests wait on it at once: behind the
// rate limit, in a window, for the account's slots. Each wait listening on it for itself would
// put as many listeners on it as there are waiters, and Node takes more than ten for a leak
// (MaxListenersExceededWarning). So one listener per signal wakes every waiter (onStop).

/** The waiters to wake when a signal aborts, each signal listened on once. */
const waiters = new WeakMap<AbortSignal, Set<() => void>>();

/**
 * Calls `wake` once `signal` aborts (at once, if it has), through the signal's one listener.
 * Returns what forgets `wake`: a waiter that ended otherwise calls it.
 */
export function onStop(signal: AbortSignal, wake: () => void): () => void {
  if (signal.aborted) {
    wake();
    return () => {};
  }
  let waiting = waiters.get(signal);
  if (!waiting) {
    const made = new Set<() => void>();
    waiters.set(signal, made);
    const wakeAll = () => {
      for (const w of [...made]) w();
      made.clear();
    };
    signal.addEventListener('abort', wakeAll, { once: true });
    waiting = made;
  }
  const set = waiting;
  set.add(wake);
  return () => void set.delete(wake);
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
