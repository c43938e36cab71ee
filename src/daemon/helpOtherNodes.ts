// Sending the batches of files other nodes read, when several daemons share one journal
// (PostgreSQL). A file is read by the node whose inbox it was dropped into, and that node sends it
// and files it (its result files, its done/). Its batches are the account's, though: any node may
// send those that are due and that no live node holds. So a big file goes out on every node's
// share of the account, and the batches of a node that died are finished by the others once its
// leases pass (the claim takes over what it left `sending`, to resend under the same reqId). The
// reader files the file when it is back; nothing here touches a file's status or its folders.
import { errorCode } from '../errors.js';
import type { Logger } from '../log/logger.js';
import { describeError } from '../log/redact.js';
import type { PipelineContext } from '../pipeline/index.js';
import { sendReadyBatches } from '../send/index.js';
import { manyWaitsOn, sleepUnlessStopped } from '../send/sleep.js';

/** How often a node looks for other nodes' work, and how many files it takes up at once. */
export const HELP_EVERY_MS = 1_000;
const FILES_AT_ONCE = 4;

export interface Helping {
  /** Resolves once the pass under way has recorded its requests (the stop signal ends it). */
  stop(): Promise<void>;
}

/** Starts looking for other nodes' due batches; none to do on a journal only this process uses. */
export function helpOtherNodes(ctx: PipelineContext, log: Logger): Helping {
  const filesWithWork = ctx.send.filesWithWork?.bind(ctx.send);
  if (!filesWithWork) return { stop: () => Promise.resolve() };
  const stopped = new AbortController();
  const signal = manyWaitsOn(
    AbortSignal.any([stopped.signal, ...(ctx.stopSignal ? [ctx.stopSignal] : [])]),
  );
  const told = tellTakenUp(ctx, log);
  const running = (async () => {
    let quiet = false;
    while (!signal.aborted) {
      try {
        if (!ctx.pause.paused) await helpOnce(ctx, await filesWithWork(FILES_AT_ONCE), told);
        quiet = false;
      } catch (err) {
        // said once until a look succeeds again (the database gone a while, say)
        if (!quiet) log.warn(`sending other nodes' batches: ${describeError(err)}`);
        quiet = true;
      }
      await sleepUnlessStopped(HELP_EVERY_MS, signal);
    }
  })();
  return {
    stop: async () => {
      stopped.abort();
      await running;
    },
  };
}

/**
 * Says once per file that this node sends batches of a file it did not read: the rows a node or a
 * `smsdrop send` stopped by a signal left, or a share of a big file another node sends too.
 */
function tellTakenUp(ctx: PipelineContext, log: Logger): (fileId: number) => Promise<void> {
  const told = new Set<number>();
  return async (fileId) => {
    if (told.has(fileId)) return;
    told.add(fileId);
    const file = await ctx.files.file(fileId);
    log.info(
      `sending batches of ${file?.name ?? 'a file'} (file ${fileId}), read by another node or a send: its due batches no live node holds go out from here too`,
      { event: 'file-helped', fileId, file: file?.name ?? null },
    );
  };
}

/** One pass over each file's due batches; the files this process runs itself are its own. */
async function helpOnce(
  ctx: PipelineContext,
  fileIds: number[],
  takenUp: (fileId: number) => Promise<void>,
): Promise<void> {
  const passes = fileIds.map(async (id) => {
    const over = ctx.inProgress.help(id);
    if (!over) return;
    await takenUp(id).catch(() => {}); // a log line: never a reason not to send
    return sendReadyBatches(ctx, id)
      .catch((err: unknown) => {
        // a batch another node took over meanwhile: its work, not an error of this node's
        if (errorCode(err) !== 'E_BATCH_TRANSITION') throw err;
      })
      .finally(over);
  });
  // every pass ends (its requests recorded) before the next look, or the stop
  const failed = (await Promise.allSettled(passes)).find((p) => p.status === 'rejected');
  if (failed) throw failed.reason;
}
