// The intake's own thread (see intakeThread.ts): reads, checks and plans one file's rows and
// writes them into the journal on a connection of its own, handing the journal over to the
// sending thread between chunks whenever that thread asks (LOCK), and telling it when released
// batches are committed. Ends with its file's intake; its connection is closed on the way out.
import { parentPort, workerData } from 'node:worker_threads';
import { GroupCounts } from '../intake/groupCounts.js';
import { readRows } from '../intake/index.js';
import { openIntakeWriter } from '../journals/index.js';
import { createRowWriter } from '../plan/rowWriter.js';
import { assertUnchanged, headerTaker, keptRowMarker } from './intakeRows.js';
import { type IntakeJob, type IntakeMessage, LOCK, toThreadError } from './intakeThread.js';

/**
 * While released batches wait for a commit, it comes within this long: the requests for them
 * start soon after they filled, at a commit per this many milliseconds at most.
 */
const RELEASE_COMMIT_MS = 10;
/**
 * Longest the intake holds its transaction open otherwise: a write of the sending thread that does
 * not pass the write gate waits this long at most in SQLite's busy handler.
 */
const HOLD_MS = 250;

const job = workerData as IntakeJob;
const port = parentPort!;
const lock = new Int32Array(job.lock);
const post = (message: IntakeMessage) => port.postMessage(message);

const writer = openIntakeWriter(job.location, job.fileId, {
  synchronous: job.synchronous,
  window: job.window,
});
const { store } = writer;
/** Commits seen when batches were last released, or undefined: none wait for a commit. */
let releasedAt: number | undefined;
let committedAt = Date.now();

/** Batches released before the last commit are due now: the sending thread may take them. */
function tellReleased(): void {
  if (releasedAt !== undefined && store.commits() !== releasedAt) {
    releasedAt = undefined;
    post({ type: 'released' });
  }
}

function commit(): void {
  writer.commit();
  committedAt = Date.now();
  tellReleased();
}

/**
 * The sending thread asks for the journal: commit and hand it over. The intake goes on reading
 * meanwhile, and waits for the journal only when it writes next (takeJournal). A commit that
 * fails (a full disk) rolled the rows back: the next chunk's write throws RowsLostError.
 */
function handOver(): void {
  if (Atomics.load(lock, 0) !== LOCK.wanted) return;
  try {
    commit();
  } catch {
    // see above
  }
  Atomics.store(lock, 0, LOCK.sender);
  Atomics.notify(lock, 0);
}

/** Before the intake writes: the journal back from the sending thread, if it has it. */
function takeJournal(): void {
  handOver();
  while (Atomics.load(lock, 0) === LOCK.sender) Atomics.wait(lock, 0, LOCK.sender, 1000);
}

/** After each chunk: released batches committed soon, the journal handed over when asked. */
function betweenChunks(): void {
  const held = Date.now() - committedAt;
  if ((releasedAt !== undefined && held >= RELEASE_COMMIT_MS) || held >= HOLD_MS) commit();
  handOver();
}

async function run(): Promise<void> {
  const groupCounts = job.overlap ? GroupCounts.start(job.filePath, job.read) : undefined;
  const planner = createRowWriter(store, {
    maxPerRequest: job.maxPerRequest,
    rowsKept: job.kept.lines.length,
    fileBytes: job.size,
    ...(job.overlap ? { onRelease: () => (releasedAt = store.commits()) } : {}),
    ...(groupCounts ? { groupCounts } : {}),
    ...(writer.sentBefore ? { sentBefore: writer.sentBefore } : {}),
  });
  const markKept = keptRowMarker(job.kept);
  const takeHeader = headerTaker(store, groupCounts)!;
  try {
    for await (const chunk of readRows(job.filePath, {
      ...job.read,
      onHeader: (map, extraNames) => {
        takeJournal();
        takeHeader(map, extraNames);
      },
    })) {
      takeJournal();
      await planner.write(markKept(chunk));
      // Before a batch filled by these rows can go: a file still growing may end in half a row.
      if (job.overlap) assertUnchanged(job.filePath, job.size);
      betweenChunks();
    }
    takeJournal();
    await planner.finish();
    if (job.overlap) assertUnchanged(job.filePath, job.size);
    tellReleased();
    post({ type: 'done', sendFirst: writer.takeSendFirst() });
  } catch (err) {
    try {
      takeJournal();
      await planner.abandon(); // commits what it keeps: requests may have gone out for its batches
    } catch {
      // The journal itself failed (a full disk?): the error below says what matters.
    }
    post({ type: 'failed', error: toThreadError(err) });
  } finally {
    await groupCounts?.stop();
  }
}

// While the intake waits for the file, the sending thread's ask comes as a message.
port.on('message', handOver);
try {
  await run();
} finally {
  try {
    takeJournal();
    writer.close();
  } finally {
    Atomics.store(lock, 0, LOCK.done);
    Atomics.notify(lock, 0);
    port.off('message', handOver);
    port.close();
  }
}
