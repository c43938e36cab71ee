// `smsdrop send FILE --dry-run`: the plan, made in a throwaway journal (openScratch) that holds a
// copy of the real journal's suppression list; the real journal is only read, to say whether the
// bytes were sent already and what other files sent (the repeat window).
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pLimit from 'p-limit';
import { type Config, defaultAppIdFor } from '../config/index.js';
import type { FileRecord, JournalHandle, JournalReader, ReadStore } from '../ports/index.js';
import { openScratch } from '../journals/index.js';
import { openReader } from '../journals/index.js';
import type { Logger } from '../log/logger.js';
import { type FileRunResult, type PipelineContext, processFile } from '../pipeline/index.js';
import { FilesInProgress } from '../pipeline/inProgress.js';
import { type MessagesPreview, previewMessages } from '../pipeline/messages.js';
import { IntakeTurns } from '../pipeline/turns.js';
import { type UnevenValues, unevenValues } from '../pipeline/valueCounts.js';
import { type Cost, planCost } from '../report/cost.js';
import { AccountPause, createRateLimiter } from '../send/rate.js';

/** Invalid rows a dry run lists, at most: enough to see what is wrong, before anything is sent. */
const DRY_RUN_INVALID_ROWS = 10;

export interface InvalidRow {
  line: number;
  reason: string;
}

export type DryRunResult = FileRunResult & {
  invalidRows?: InvalidRow[];
  messages?: MessagesPreview;
  unevenValues?: UnevenValues[];
  /** What the plan costs (SMSDROP_PRICE_PER_SEGMENT). */
  cost?: Cost;
  /** A send stopped by a signal: the other nodes whose daemons send the rest of its batches. */
  carriedOnBy?: string[];
};

/** Templates the file's rows give different numbers of values, if any (valueCounts.ts). */
export async function unevenOf(
  reads: Pick<ReadStore, 'unevenValueCounts'>,
  result: FileRunResult,
): Promise<{ unevenValues?: UnevenValues[] }> {
  if (!result.file || result.outcome === 'already-sent' || result.outcome === 'refused') return {};
  const uneven = await unevenValues(reads, result.file.id);
  return uneven.length > 0 ? { unevenValues: uneven } : {};
}

/** No file of the real journal is the dry run's own. */
const NO_FILE = 0;

/**
 * The plan, made in a throwaway journal: the real one is only read, to say if it was sent and what
 * other files sent.
 */
export async function dryRun(config: Config, file: string, log: Logger): Promise<DryRunResult> {
  const tempDir = mkdtempSync(path.join(os.tmpdir(), 'smsdrop-dry-run-'));
  let real: JournalReader | undefined;
  let scratch: JournalHandle | undefined;
  try {
    real = await openReader(config);
    scratch = await openScratch(path.join(tempDir, 'plan.sqlite'), real);
    return await planInScratch(config, file, log, scratch, real);
  } finally {
    await scratch?.close();
    real?.close();
    rmSync(tempDir, { recursive: true, force: true });
  }
}

async function planInScratch(
  config: Config,
  file: string,
  log: Logger,
  scratch: JournalHandle,
  real: JournalReader | undefined,
): Promise<DryRunResult> {
  const context: PipelineContext = {
    send: scratch.send,
    files: scratch.files,
    reads: scratch.reads,
    client: {
      send: () => Promise.resolve({ kind: 'not-sent', reason: 'dry run' }),
      close: async () => {},
    },
    config,
    limit: pLimit(1),
    rateLimiter: createRateLimiter(),
    pause: new AccountPause(),
    defaultAppId: defaultAppIdFor(config),
    turns: new IntakeTurns(scratch.files),
    inProgress: new FilesInProgress(),
  };
  // The rows other files sent are the real journal's (the repeat window): a real run would not
  // send them.
  const sentBefore = () =>
    real && config.repeatWindow ? real.sentBefore(NO_FILE, config.repeatWindow) : undefined;
  const result = await processFile(context, file, { dryRun: true, sentBefore });
  if (real && result.sha256) await noteIfAlreadySent(real, result.sha256, log);
  if (!result.file || result.outcome !== 'planned') return result;
  const messages = config.templates
    ? { messages: await previewMessages(scratch.reads, result.file.id, config.templates) }
    : {};
  const cost = result.plan && planCost(result.plan, messages.messages?.billableSegments, config);
  return {
    ...result,
    invalidRows: await scratch.reads.invalidRows(result.file.id, DRY_RUN_INVALID_ROWS),
    ...messages,
    ...(cost ? { cost } : {}),
    ...(await unevenOf(scratch.reads, result)),
  };
}

async function noteIfAlreadySent(
  real: Pick<ReadStore, 'filesByShaPrefix'>,
  sha256: string,
  log: Logger,
): Promise<void> {
  // The latest record of these bytes (a whole sha256 is a prefix of itself only).
  const earlier = (await real.filesByShaPrefix(sha256)).reduce<FileRecord | undefined>(
    (latest, f) => (latest && latest.generation >= f.generation ? latest : f),
    undefined,
  );
  if (earlier)
    log.warn(
      `these bytes are already in the journal as ${earlier.name} (status ${earlier.status}); a real send would ${earlier.status === 'done' ? 'report "already sent" unless --resend' : 'continue that run'}`,
    );
}
