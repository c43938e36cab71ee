// A file's run (send, resume, retry, the daemon's), recorded in the journal from its start to its
// end, so that the file's time is the sum of its runs (journalRules/runs.ts).
import type { FileStore } from '../ports/index.js';

/**
 * A run of the file, recorded in the journal from its start to its end (journalRules/runs.ts), so
 * that its time adds to its earlier runs'. A result read meanwhile has the run still open: its
 * time so far is the time since its start (runTimeMs).
 */
export async function timedRun<T>(
  ctx: { files: Pick<FileStore, 'runStarted' | 'runEnded'> },
  fileId: number,
  body: () => Promise<T>,
): Promise<T> {
  await ctx.files.runStarted(fileId);
  let ended = false;
  try {
    const outcome = await body();
    await ctx.files.runEnded(fileId);
    ended = true;
    return outcome;
  } finally {
    // The run failed: its error is the news, not a time that could not be recorded (the next run
    // counts it up to its last request).
    if (!ended) await ctx.files.runEnded(fileId).catch(() => {});
  }
}
