// Files in progress, at most `max` at a time (request concurrency is bounded separately, by the
// one p-limit all files share), on p-queue. A job may hand back a promise to run it again after:
// a file paused by the account switch, or waiting for another file with the same bytes, frees its
// place meanwhile, so new files keep being read in; it comes back first in line (a higher
// priority: p-queue keeps the order of equal priorities).
import PQueue from 'p-queue';

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

const NEW = 0;
const RETURNING = 1;

/**
 * `run` should settle every error itself; one that escapes is handed to `onEscape`, never thrown.
 * `onIdle`: called each time the last job running ends with none waiting.
 */
export function createFilePool(
  max: number,
  run: (name: string) => Promise<JobResult>,
  onEscape: (name: string, err: unknown) => void,
  onIdle?: () => void,
): FilePool {
  const queue = new PQueue({ concurrency: max });
  if (onIdle) queue.on('idle', onIdle);
  let stopped = false;

  const enqueue = (name: string, priority: number) => {
    if (stopped) return;
    void queue.add(
      async () => {
        let result: JobResult = undefined;
        try {
          result = await run(name);
        } catch (err) {
          onEscape(name, err);
        }
        if (result) void result.again.then(() => enqueue(name, RETURNING));
      },
      { priority },
    );
  };

  return {
    add: (name) => enqueue(name, NEW),
    stop() {
      stopped = true;
      queue.clear();
    },
    onIdle: () => queue.onPendingZero(),
    get running() {
      return queue.pending;
    },
    get queued() {
      return queue.size;
    },
  };
}
