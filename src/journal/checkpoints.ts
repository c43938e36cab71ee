// The WAL's checkpoints on a thread of their own, for the process that sends. A checkpoint copies
// the WAL's pages into the database and syncs both files; SQLite runs it inside the commit that
// crosses wal_autocheckpoint, so on the main thread it held the event loop, and every answer in
// flight with it, for 55-75 ms every ~1.3 s while a large file was read and 15-24 ms every ~1.5 s
// after (docs/benchmark.md). A connection of another thread now copies and syncs the commits every
// CHECKPOINT_EVERY_MS, and nothing waits for it: readers and writers go on while a PASSIVE
// checkpoint runs.
//
// The main connection keeps its own bound (open.ts): the WAL starts over from its beginning only
// when a writer finds every frame copied, which under a steady stream of commits a checkpoint of
// another connection seldom leaves it (the WAL of a 20,000-request send grew to 64 MB). Its own
// checkpoint, right after its commit, finds most pages copied and synced by the thread: 24-39 ms
// while a 1M-row file is read, and too short to see after. Crash safety is SQLite's either way: a
// checkpoint only copies pages already committed to the WAL.
import { startWorker } from '../workerThread.js';
import { insideOf, type Journal } from './connection.js';
import type { CheckpointJob } from './checkpointWorker.js';

/** How often the thread checkpoints: each copies what a few hundred ms of commits wrote. */
export const CHECKPOINT_EVERY_MS = 250;
/** The thread holds no rows: a small heap (the limits only stop a runaway, nothing expected). */
const THREAD_LIMITS = { maxYoungGenerationSizeMb: 1, maxOldGenerationSizeMb: 8 };

/** Starts checkpointing `db` on a thread of its own; stopCheckpoints ends it. */
export function startCheckpoints(db: Journal, synchronous: 'normal' | 'full'): void {
  const inside = insideOf(db);
  if (inside.checkpoints) return;
  const job: CheckpointJob = { file: db.name, synchronous, everyMs: CHECKPOINT_EVERY_MS };
  const worker = startWorker(import.meta.url, 'checkpointWorker', {
    workerData: job,
    resourceLimits: THREAD_LIMITS,
  });
  // The thread never keeps the process alive: the journal's close ends it, and so does exit.
  worker.unref();
  // A thread that fails (its checkpoint, or its start) ends: the main connection's own bound
  // still keeps the WAL small.
  worker.on('error', () => {});
  worker.once('exit', () => {
    if (inside.checkpoints?.worker === worker) inside.checkpoints = undefined;
  });
  inside.checkpoints = { worker };
}

/** Ends the checkpoint thread of `db`, if any, before the journal closes. */
export async function stopCheckpoints(db: Journal): Promise<void> {
  const inside = insideOf(db);
  const running = inside.checkpoints;
  if (!running) return;
  inside.checkpoints = undefined;
  await running.worker.terminate();
}

/** True while `db` is checkpointed by a thread of its own. */
export function checkpointsOnThread(db: Journal): boolean {
  return insideOf(db).checkpoints !== undefined;
}
