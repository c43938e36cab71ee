// The core of `smsdrop resume`: sends what a file stopped or paused part-way still has pending,
// from the journal alone. A file read to the end has every row and every batch in the journal, so
// its bytes are not needed.
import { commitBulk } from '../journal/bulk.js';
import {
  countFile,
  type FileCounts,
  type FileRecord,
  setFileStatus,
  type WaitingFile,
} from '../journal/files.js';
import { FILE_STATUS } from '../journal/states.js';
import { sendFile, type SendResult } from '../send/index.js';
import { type PipelineContext, providerChange } from './index.js';
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
export async function resumeFile(ctx: PipelineContext, file: FileRecord): Promise<ResumeResult> {
  const changed = providerChange(file, ctx.provider);
  if (changed) throw changed;
  const sent = await sendFile(ctx, file.id);
  if (sent.state === 'finished') {
    setFileStatus(ctx.db, file.id, FILE_STATUS.done);
    commitBulk(ctx.db);
  }
  const counts = countFile(ctx.db, file.id);
  return { sent, counts, waiting: heldRepeats(ctx, file.id, counts) };
}
