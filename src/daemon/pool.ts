// Files in progress, at most `max` at a time (request concurrency is bounded separately, by the
// one p-limit all files share). A job may hand back a promise to run it again after: a file
// paused by the account switch, or waiting for another file with the same bytes, frees its place
// meanwhile, so new files keep being read in; it comes back first in line.
export type JobResult = void | { again: Promise<void> };

export interface FilePool {
  add(name: string): void;
  /** No more jobs start; files waiting to come back are dropped (they stay in processing/). */
  stop(): void;
  /** Resolves when no job is running. */
  onIdle(): Promise<void>;
  readonly running: number;
  readonly queued: number;
}

/**
 * `run` should settle every error itself; one that escapes is handed to `onEscape`, never thrown.
 */
export function createFilePool(
  max: number,
  run: (name: string) => Promise<JobResult>,
  onEscape: (name: string, err: unknown) => void,
): FilePool {
  const queue: string[] = [];
  /** Files coming back (after a pause or a wait) go before new ones, in the order they return. */
  const returning: string[] = [];
  let running = 0;
  let stopped = false;
  let idleWaiters: Array<() => void> = [];

  const notifyIfIdle = () => {
    if (running > 0) return;
    const waiters = idleWaiters;
    idleWaiters = [];
    for (const resolve of waiters) resolve();
  };

  const tryToStartAnother = () => {
    while (!stopped && running < max && returning.length + queue.length > 0)
      void start((returning.shift() ?? queue.shift())!);
    notifyIfIdle();
  };

  const start = async (name: string) => {
    running++;
    let result: JobResult = undefined;
    try {
      result = await run(name);
    } catch (err) {
      onEscape(name, err);
    } finally {
      running--;
    }
    if (result) void result.again.then(() => comeBack(name));
    tryToStartAnother();
  };

  const comeBack = (name: string) => {
    if (stopped) return;
    returning.push(name);
    tryToStartAnother();
  };

  return {
    add(name) {
      if (stopped) return;
      queue.push(name);
      tryToStartAnother();
    },
    stop() {
      stopped = true;
      queue.length = 0;
      returning.length = 0;
    },
    onIdle() {
      return running === 0
        ? Promise.resolve()
        : new Promise((resolve) => idleWaiters.push(resolve));
    },
    get running() {
      return running;
    },
    get queued() {
      return returning.length + queue.length;
    },
  };
}
