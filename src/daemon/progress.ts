// The periodic progress line while sending: rows settled since start, rows still to go in the
// files in progress, requests per second over the last interval, and an ETA at that pace. Quiet
// when nothing is being sent (idle, or paused: the pause has its own line).
import type { ReadStore } from '../ports/index.js';
import type { Logger } from '../log/logger.js';
import type { PipelineContext } from '../pipeline/index.js';

export interface ProgressReporter {
  stop(): void;
}

/**
 * `activeHashes`: sha256 of each file in progress, to count what is left of those files only (the
 * live batches, planned or being sent, not a scan of rows).
 */
export function startProgress(
  ctx: PipelineContext,
  reads: Pick<ReadStore, 'numbersToSend'>,
  log: Logger,
  intervalMs: number,
  activeHashes: () => string[],
): ProgressReporter {
  let rowsDone = 0;
  let requests = 0;
  const previous = ctx.onBatchDone;
  ctx.onBatchDone = (event) => {
    previous?.(event);
    rowsDone += event.rowsSettled;
    requests += 1;
  };
  let last = { at: performance.now(), rowsDone: 0, requests: 0 };
  const tick = async () => {
    const now = { at: performance.now(), rowsDone, requests };
    const seconds = Math.max((now.at - last.at) / 1000, 0.001);
    const sent = now.requests - last.requests;
    const rowsPerSecond = (now.rowsDone - last.rowsDone) / seconds;
    last = now;
    if (sent === 0) return;
    const toGo = await reads.numbersToSend(activeHashes());
    const requestsPerSecond = Math.round((sent / seconds) * 10) / 10;
    const etaSeconds = rowsPerSecond > 0 ? Math.ceil(toGo / rowsPerSecond) : undefined;
    log.info(
      `progress: ${rowsDone} rows done, ${toGo} to go, ${requestsPerSecond} requests/s, ETA ${formatEta(etaSeconds)}`,
      {
        event: 'progress',
        rowsDone,
        rowsToGo: toGo,
        requestsPerSecond,
        etaSeconds: etaSeconds ?? null,
      },
    );
  };
  // A report must never take the daemon down: a failed tick is logged and the next one tries again.
  const safeTick = () => {
    tick().catch((err: unknown) => log.warn(`progress line skipped: ${(err as Error).message}`));
  };
  const timer = setInterval(safeTick, intervalMs);
  timer.unref();
  return {
    stop() {
      clearInterval(timer);
      ctx.onBatchDone = previous;
    },
  };
}

export function formatEta(seconds: number | undefined): string {
  if (seconds === undefined) return 'unknown';
  if (seconds < 60) return `${seconds} s`;
  const minutes = Math.floor(seconds / 60);
  if (minutes < 60) return `${minutes} min ${seconds % 60} s`;
  return `${Math.floor(minutes / 60)} h ${minutes % 60} min`;
}
