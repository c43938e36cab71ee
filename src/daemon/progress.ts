// The periodic progress line while sending: rows settled since start, rows still to go in the
// files in progress, requests per second over the last interval, and an ETA at that pace. Quiet
// when nothing is being sent (idle, or paused: the pause has its own line). A file still being
// read has only its rows read so far in the journal: its rows to go are estimated from the bytes
// read (report/estimate.ts), and the line says so.
import type { ReadStore } from '../ports/index.js';
import { FILE_STATUS } from '../ports/states.js';
import type { Logger } from '../log/logger.js';
import type { PipelineContext } from '../pipeline/index.js';
import { estimateRows } from '../report/estimate.js';

/** What the progress line reads of the journal. */
export type ProgressReads = Pick<ReadStore, 'numbersToSend' | 'unfinishedFileLines' | 'file'>;

export interface ProgressReporter {
  stop(): void;
}

/**
 * `activeHashes`: sha256 of each file in progress, to count what is left of those files only (the
 * live batches, planned or being sent, not a scan of rows). The files whose batches this node sends
 * for other nodes (ctx.inProgress.helping) count too: their rows to go are the files' own, which
 * every node sending them brings down.
 */
export function startProgress(
  ctx: PipelineContext,
  reads: ProgressReads,
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
    const { toGo, helped, ofOthers } = await whatIsLeft(ctx, reads, activeHashes());
    const requestsPerSecond = Math.round((sent / seconds) * 10) / 10;
    const etaSeconds =
      toGo.rows !== undefined && rowsPerSecond > 0
        ? Math.ceil(toGo.rows / rowsPerSecond)
        : undefined;
    const about = toGo.estimated ? '~' : '';
    const toGoText =
      toGo.rows === undefined
        ? 'rows to go not known yet (a file is still being read)'
        : `${about}${toGo.rows} to go${toGo.estimated ? ' (estimated: a file is still being read)' : ''}${helpedText(helped.length, ofOthers)}`;
    log.info(
      `progress: ${rowsDone} rows done, ${toGoText}, ${requestsPerSecond} requests/s, ETA ${etaSeconds === undefined ? 'unknown' : `${about}${formatEta(etaSeconds)}`}`,
      {
        event: 'progress',
        rowsDone,
        rowsToGo: toGo.rows ?? null,
        estimated: toGo.estimated,
        requestsPerSecond,
        etaSeconds: etaSeconds ?? null,
        ...(helped.length > 0 ? { helpedFiles: helped.length, rowsToGoOfOthers: ofOthers } : {}),
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

/** Rows to go of the files in progress and of those helped (`ofOthers`: of the latter). */
async function whatIsLeft(ctx: PipelineContext, reads: ProgressReads, active: string[]) {
  const helped: string[] = [];
  for (const id of ctx.inProgress.takeHelped()) {
    const file = await reads.file(id);
    if (file) helped.push(file.sha256);
  }
  const toGo = await rowsToGo(reads, [...active, ...helped]);
  const ofOthers = helped.length > 0 ? await reads.numbersToSend(helped) : 0;
  return { toGo, helped, ofOthers };
}

/** What of the rows to go is in files other nodes read, whose batches this node sends too. */
function helpedText(files: number, rows: number): string {
  if (files === 0) return '';
  return ` (${rows} of them in ${files === 1 ? 'a file' : `${files} files`} another node read, sent from here too)`;
}

export function formatEta(seconds: number | undefined): string {
  if (seconds === undefined) return 'unknown';
  if (seconds < 60) return `${seconds} s`;
  const minutes = Math.floor(seconds / 60);
  if (minutes < 60) return `${minutes} min ${seconds % 60} s`;
  return `${Math.floor(minutes / 60)} h ${minutes % 60} min`;
}

/**
 * Rows still to send in the files with these bytes: exact for the files read to the end; for a
 * file still being read, estimated (estimateRows), or not known yet (undefined), never the rows
 * read so far taken for the whole file.
 */
async function rowsToGo(
  reads: ProgressReads,
  hashes: readonly string[],
): Promise<{ rows: number | undefined; estimated: boolean }> {
  let rows = await reads.numbersToSend(hashes);
  const reading = (await reads.unfinishedFileLines()).filter(
    (line) => line.status === FILE_STATUS.intake && hashes.includes(line.sha256),
  );
  for (const line of reading) {
    const estimate = estimateRows(line, await reads.file(line.id));
    if (!estimate) return { rows: undefined, estimated: true };
    rows += Math.max(0, estimate.sendable - (line.accepted + line.failed + line.unknown));
  }
  // Nothing left to send while a file is still being read is not known, whatever the sum says.
  if (reading.length > 0 && rows === 0) return { rows: undefined, estimated: true };
  return { rows, estimated: reading.length > 0 };
}
