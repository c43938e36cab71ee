// The journal's thread, for the process that sends: the WAL's checkpoints, and the doubts'
// look-up (placedRows.ts).
//
// A checkpoint copies the WAL's pages into the database and syncs both files; SQLite runs it
// inside the commit that crosses wal_autocheckpoint, so on the main thread it would hold the event
// loop, and every answer in flight with it, for tens of milliseconds at a time
// (docs/benchmark-history.md). A connection of another thread copies and syncs the commits every
// CHECKPOINT_EVERY_MS instead, and nothing waits for it: readers and writers go on while a PASSIVE
// checkpoint runs.
//
// The main connection keeps its own bound (open.ts): the WAL starts over from its beginning only
// when a writer finds every frame copied, which under a steady stream of commits a checkpoint of
// another connection seldom leaves it, so without this bound the WAL grows with the send. Its own
// checkpoint, right after its commit, finds most pages copied and synced by the thread, and is
// short. Crash safety is SQLite's either way: a checkpoint only copies pages already committed to
// the WAL.
//
// The look-up reads every row of a file once, at the end of its intake, which on the main thread
// would delay the answers of the requests in flight for as long. Asked here, it
// reads only what the main connection has committed; a thread that ends meanwhile fails what was
// asked of it, and the asker reads itself.
import { SmsdropError } from '../errors.js';
import { startWorker } from '../workerThread.js';
import { insideOf, type Journal, type JournalThread } from './connection.js';
import type { CheckpointJob } from './checkpointWorker.js';
import type { PlacedRow, PlacedRowsAnswer, PlacedRowsRequest } from './placedRowsSql.js';

/** How often the thread checkpoints: each copies what a few hundred ms of commits wrote. */
export const CHECKPOINT_EVERY_MS = 250;
/** How long a thread asked to stop may take (its start, on a loaded machine) before it is ended. */
const STOP_WITHIN_MS = 10_000;
/**
 * The thread holds no rows, only a page of the look-up's at a time: the limits only stop a
 * runaway. Not lower: under 8 MB of old generation, a thread run from the sources (tsx) ran out
 * while it loaded its modules, and out while it loaded SQLite's addon, it aborted the process.
 */
const THREAD_LIMITS = { maxYoungGenerationSizeMb: 1, maxOldGenerationSizeMb: 64 };

/** Starts checkpointing `db` on a thread of its own; stopCheckpoints ends it. */
export function startCheckpoints(db: Journal, synchronous: 'normal' | 'full'): void {
  const inside = insideOf(db);
  if (inside.checkpoints) return;
  const job: CheckpointJob = { file: db.name, synchronous, everyMs: CHECKPOINT_EVERY_MS };
  const worker = startWorker(import.meta.url, 'checkpointWorker', {
    workerData: job,
    resourceLimits: THREAD_LIMITS,
  });
  const thread: JournalThread = { worker, waiting: new Map(), asked: 0 };
  // The thread never keeps the process alive: the journal's close ends it, and so does exit.
  worker.unref();
  worker.on('message', (answer: PlacedRowsAnswer) => {
    const asker = thread.waiting.get(answer.id);
    thread.waiting.delete(answer.id);
    if ('error' in answer) asker?.reject(threadError(answer.error));
    else asker?.resolve(answer.rows);
  });
  // A thread that fails (its checkpoint, or its start) ends: the main connection's own bound
  // still keeps the WAL small, and what was asked of it is read by the asker.
  worker.on('error', () => {});
  worker.once('exit', () => {
    if (inside.checkpoints === thread) inside.checkpoints = undefined;
    for (const asker of thread.waiting.values()) asker.reject(threadError('it ended'));
    thread.waiting.clear();
  });
  inside.checkpoints = thread;
}

/**
 * Ends the checkpoint thread of `db`, if any, before the journal closes: asked to stop, it closes
 * its connection and ends (checkpointWorker.ts says why it is not terminated); one that has not
 * within STOP_WITHIN_MS is terminated.
 */
export async function stopCheckpoints(db: Journal): Promise<void> {
  const inside = insideOf(db);
  const running = inside.checkpoints;
  if (!running) return;
  inside.checkpoints = undefined;
  // Referenced, so that the process waits for the end it awaits (an unreferenced thread's end
  // would not keep it alive).
  running.worker.ref();
  const ended = new Promise((resolve) => running.worker.once('exit', resolve));
  running.worker.postMessage('stop');
  const bound = setTimeout(() => void running.worker.terminate(), STOP_WITHIN_MS);
  await ended;
  clearTimeout(bound);
}

/** True while `db` is checkpointed by a thread of its own. */
export function checkpointsOnThread(db: Journal): boolean {
  return insideOf(db).checkpoints !== undefined;
}

/**
 * Asks the journal's thread for a step of the doubts' look-up: undefined when `db` has no thread.
 * The thread reads with its own connection: only what the journal has committed.
 */
export function askThread(
  db: Journal,
  request: PlacedRowsRequest,
): Promise<PlacedRow[]> | undefined {
  const thread = insideOf(db).checkpoints;
  if (!thread) return undefined;
  const id = ++thread.asked;
  return new Promise<PlacedRow[]>((resolve, reject) => {
    thread.waiting.set(id, { resolve, reject });
    // Referenced while it owes an answer: the process waits for it (or for the thread's end).
    thread.worker.ref();
    thread.worker.postMessage({ id, request });
  }).finally(() => {
    // Unless it is being stopped: then the process waits for its end (stopCheckpoints).
    if (thread.waiting.size === 0 && insideOf(db).checkpoints === thread) thread.worker.unref();
  });
}

/** Requests the thread asked about: how many it was asked so far (a test sees the look-up went). */
export function threadRequests(db: Journal): number {
  return insideOf(db).checkpoints?.asked ?? 0;
}

function threadError(why: string): Error {
  return new SmsdropError('E_INTERNAL', `the journal's thread did not read: ${why}`);
}
