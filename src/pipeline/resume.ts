// The core of `smsdrop resume`: sends what a file stopped or paused part-way still has pending,
// from the journal alone. A file read to the end has every row and every batch in the journal, so
// its bytes are not needed.
import type { FileCounts, FileRecord, FileStore, WaitingFile } from '../ports/index.js';
import { FILE_STATUS } from '../ports/states.js';
import { sendFile, type SendResult } from '../send/index.js';
import type { PipelineContext } from './context.js';
import { providerChange } from './outcome.js';
import { timedRun } from './runs.js';
import { heldRepeats } from './retry.js';

export interface ResumeResult {
  sent: SendResult;
  counts: FileCounts;
  /** This file's repeats that another file holds and has not sent (see heldRepeats). */
  waiting: WaitingFile[];
}

/**
 * Sends the file's pending batches and marks it done once every one is final. Throws
 * E_PROVIDER_CHANGED when the file was planned for another provider or account.
 */
export async function resumeFile(
  ctx: PipelineContext,
  files: Pick<FileStore, 'status' | 'counts' | 'waitingRepeats'>,
  file: FileRecord,
): Promise<ResumeResult> {
  const changed = providerChange(file, ctx.provider);
  if (changed) throw changed;
  const sent = await timedRun(ctx, file.id, async () => {
    const outcome = await sendFile(ctx, file.id);
    if (outcome.state === 'finished') await files.status(file.id, FILE_STATUS.done);
    return outcome;
  });
  const counts = await files.counts(file.id);
  return { sent, counts, waiting: await heldRepeats(files, file.id, counts) };
}
