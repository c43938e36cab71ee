// A file an operator holds (held for approval, scheduled, paused: ports/control.ts) stays in
// processing/ and frees its place in the pool; it comes back once it is free to go (approved, its
// start time come, resumed) or cancelled (then it is filed as done, its unsent rows cancelled).
// The journal is asked every second: a command from the CLI, the API or another node is obeyed
// within that.
import { setTimeout as sleep } from 'node:timers/promises';
import { formatMoment } from '../log/time.js';
import { describeError } from '../log/redact.js';
import { freeToGo } from '../ports/control.js';
import { FILE_CONTROL } from '../ports/states.js';
import type { FileRunResult } from '../pipeline/index.js';
import { previewOf, previewText } from '../report/preview.js';
import { type FileLife, noteEvent } from './fileLife.js';
import type { JobResult } from './pool.js';

/** How often a held file's control is read from the journal. */
export const HOLD_POLL_MS = 1_000;

export async function heldFile(
  life: FileLife,
  name: string,
  result: FileRunResult,
): Promise<JobResult> {
  const fileId = result.file!.id;
  const { waitingFor, startAt } = result.held!;
  const { config } = life.ctx;
  const pending = `${result.counts.pending} rows wait in processing/`;
  if (waitingFor === FILE_CONTROL.held) {
    const preview = await previewOf(life.ctx.reads, fileId, config);
    life.log.info(
      `${name}: held for approval: ${previewText(preview)}; send it with smsdrop approve ${fileId}`,
      { event: 'file-held', file: name, fileId, preview },
    );
    if (result.readNow) await noteEvent(life, 'file.held', fileId, previewText(preview));
  } else if (waitingFor === 'scheduled') {
    life.log.info(
      `${name}: scheduled: ${pending} until ${formatMoment(startAt, config.timezone)}`,
      { event: 'file-scheduled', file: name, fileId, startAt },
    );
  } else {
    life.log.info(`${name}: paused by an operator: ${pending} for smsdrop resume ${fileId}`, {
      event: 'file-paused-by-operator',
      file: name,
      fileId,
    });
  }
  return { again: untilFree(life, fileId) };
}

/** Resolves once the file may go on (free to go, or cancelled: it then ends), or on stop. */
async function untilFree(life: FileLife, fileId: number): Promise<void> {
  const { ctx } = life;
  while (!ctx.stopSignal?.aborted) {
    await sleep(HOLD_POLL_MS, undefined, { ref: false });
    try {
      const state = await ctx.control!.control(fileId);
      if (!state || state.control === FILE_CONTROL.cancelled || freeToGo(state, Date.now())) return;
    } catch (err) {
      life.log.warn(`reading the control of file ${fileId}: ${describeError(err)}`);
    }
  }
}
