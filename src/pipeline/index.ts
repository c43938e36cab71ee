// One file through the whole pipeline: inspect (hash, encoding) -> intake into the journal ->
// plan -> send -> final counts. Used by `smsdrop send` and by the daemon for each dropped file.
// Every step is resumable from the journal, so the same bytes given again continue where the
// last run stopped, and a finished file is never sent again unless a resend is asked for.
import { statSync } from 'node:fs';
import path from 'node:path';
import { FILE_STATUS, type FileCounts, type FileRecord, type WaitingFile } from '../ports/index.js';
import { type ErrorCode, SmsdropError } from '../errors.js';
import { type FileInspection, hashPrefix, inspectFile } from '../intake/inspect.js';
import type { ProcessOptions } from './processOptions.js';
import { sendFile, type SendResult } from '../send/index.js';
import { type ResultSpool, spoolResults } from '../results/spool.js';
import type { PipelineContext } from './context.js';
import { type Refusal, refusalOf, refuse } from './intakeRun.js';
import { intakeInTurn } from './intakeInTurn.js';
import { providerChange } from './outcome.js';
import { timedRun } from './runs.js';

export type { PipelineContext } from './context.js';
export type { Refusal } from './intakeRun.js';
export { everyRowAccepted, providerChange, repeatsNote, waitingNote } from './outcome.js';

export type { ProcessOptions } from './processOptions.js';

export interface PlanSummary {
  groups: number;
  requests: number;
  numbers: number;
}

/** 'elsewhere': another node sharing the journal reads and sends these bytes now (reason). */
/** 'held': an operator holds it (held for approval, scheduled, paused: `held`). */
export type FileOutcome =
  'finished' | 'already-sent' | 'paused' | 'held' | 'stopped' | 'refused' | 'planned' | 'elsewhere';

export interface FileRunResult {
  outcome: FileOutcome;
  file?: FileRecord;
  sha256?: string;
  counts: FileCounts;
  plan?: PlanSummary;
  /** Why the file was refused, or why sending paused. */
  reason?: string;
  /**
   * The stable code (docs/errors.md) of the refusal (E_FILE_EMPTY, E_DISK_FULL…) or of the pause
   * (E_PROVIDER_AUTH…).
   */
  code?: ErrorCode;
  /** Files holding, not sent yet, rows this file left to them as repeats (see waitingRepeats). */
  waiting?: WaitingFile[];
  /** Outcome 'held': what the file waits for, and its start time when scheduled. */
  held?: { waitingFor: 'held' | 'paused' | 'scheduled'; startAt: string | null };
  /** This run read the file into the journal (not an earlier one). */
  readNow?: boolean;
  elapsedMs: number;
}

const EMPTY_COUNTS: FileCounts = {
  rows: 0,
  invalid: 0,
  duplicates: 0,
  repeats: 0,
  accepted: 0,
  failed: 0,
  unknown: 0,
  cancelled: 0,
  pending: 0,
  requests: 0,
};

/** The run's result, with the file's counts and record as the journal has them now. */
type Result = (
  outcome: FileOutcome,
  file: FileRecord | undefined,
  extra?: Partial<FileRunResult>,
) => Promise<FileRunResult>;

export async function processFile(
  ctx: PipelineContext,
  filePath: string,
  options: ProcessOptions = {},
): Promise<FileRunResult> {
  const result = resultOf(ctx, Date.now());
  let inspection = options.inspection;
  try {
    inspection ??= await inspectFile(filePath, ctx.config.encoding);
  } catch (err) {
    return result('refused', undefined, refusalOf(filePath, err));
  }
  let found = await recordToRun(ctx, filePath, inspection, options, result);
  // Another node recorded the same bytes between our look and our record: asked again, they are
  // found as that node's file (read once, by it), as if dropped a moment later.
  if (found === 'raced') found = await recordToRun(ctx, filePath, inspection, options, result);
  if (found === 'raced')
    throw new SmsdropError('E_INTERNAL', `${filePath}: its journal record keeps changing`);
  if ('outcome' in found) return found;
  const file = found;
  if (ctx.inProgress.has(file.id))
    throw new SmsdropError(
      'E_INTERNAL',
      `${filePath}: its journal record (file ${file.id}) is already being processed`,
    );
  const reader = await ctx.files.claim(file.id);
  if (reader !== undefined)
    return result('elsewhere', file, { reason: `node ${reader} is reading and sending it` });
  ctx.inProgress.add(file.id);
  try {
    await ctx.inProgress.helpOver(file.id); // a pass sending it for another node ends first
    return await timedRun(ctx, file.id, () =>
      runFile(ctx, file, filePath, inspection, options, result),
    );
  } finally {
    ctx.inProgress.delete(file.id);
    await ctx.files.unclaim(file.id);
  }
}

function resultOf(ctx: PipelineContext, started: number): Result {
  return async (outcome, file, extra = {}) => {
    const counts = file ? await ctx.files.counts(file.id) : EMPTY_COUNTS;
    const waiting =
      file && counts.repeats > 0
        ? (await ctx.files.waitingRepeats(file.id)).map((w) => ({
            ...w,
            inProgress: ctx.inProgress.has(w.id),
          }))
        : [];
    const now = file && (await ctx.files.file(file.id))!;
    return {
      outcome,
      ...(file && now ? { file: now, sha256: file.sha256 } : {}),
      counts,
      ...(waiting.length > 0 ? { waiting } : {}),
      elapsedMs: Date.now() - started,
      ...extra,
    };
  };
}

/**
 * The journal record these bytes go on with (found, or made), or the result when they do not go
 * on: sent already, refused for good, or planned for another provider; 'raced' when another
 * process recorded the same bytes after they were looked up here.
 */
async function recordToRun(
  ctx: PipelineContext,
  filePath: string,
  inspection: FileInspection,
  options: ProcessOptions,
  result: Result,
): Promise<FileRecord | FileRunResult | 'raced'> {
  const file = await ctx.files.identify(inspection.sha256);
  if (file?.status === FILE_STATUS.done && !options.resend) return result('already-sent', file);
  // Read again, a refused file would continue from its rows; they were pruned, and what went out
  // then with them.
  if (file?.status === FILE_STATUS.refused && file.pruned_at !== null && !options.resend)
    return result('refused', file, { code: 'E_FILE_PRUNED', reason: prunedRefusal(file) });
  if (!file || file.status === FILE_STATUS.done)
    return newRecord(ctx, filePath, inspection, options, file, result);
  // Refused with nothing sent, it is read anew from its first row: for the provider of now.
  const anew = file.status === FILE_STATUS.refused && (await ctx.files.requestsMade(file.id)) === 0;
  if (anew && ctx.provider) await ctx.files.setProvider(file.id, ctx.provider);
  if (anew) await ctx.files.setEncoding(file.id, inspection.encoding);
  const changed = anew ? undefined : providerChange(file, ctx.provider);
  if (changed) return result('refused', file, { code: changed.code, reason: changed.message });
  return file;
}

/**
 * A new record for these bytes, or the unfinished file they continue taken over (see
 * grownFromUnfinished); `sentOne`: the done record of the same bytes sent again (--resend).
 */
async function newRecord(
  ctx: PipelineContext,
  filePath: string,
  inspection: FileInspection,
  options: ProcessOptions,
  sentOne: FileRecord | undefined,
  result: Result,
): Promise<FileRecord | FileRunResult | 'raced'> {
  const identity = {
    sha256: inspection.sha256,
    name: options.name ?? path.basename(filePath),
    path: path.resolve(filePath),
    size: inspection.size,
    encoding: inspection.encoding,
    ...(ctx.provider ? { provider: ctx.provider } : {}),
    ...(options.hold ? { held: true } : {}),
  };
  const grownFrom =
    sentOne || options.resend ? undefined : await grownFromUnfinished(ctx, filePath, inspection);
  const changed = grownFrom && providerChange(grownFrom, ctx.provider);
  if (changed) return result('refused', grownFrom, { code: changed.code, reason: changed.message });
  // Asked again after those awaits, with nothing in between: another file may have taken it over.
  if (grownFrom && (await stillUnfinished(ctx, grownFrom)))
    return ctx.files.adopt(grownFrom.id, identity);
  return (await ctx.files.createUnlessRecorded(identity, sentOne?.generation ?? 0)) ?? 'raced';
}

async function runFile(
  ctx: PipelineContext,
  file: FileRecord,
  filePath: string,
  inspection: FileInspection,
  options: ProcessOptions,
  result: Result,
): Promise<FileRunResult> {
  const readNow = file.status === FILE_STATUS.intake || file.status === FILE_STATUS.refused;
  let sendingOn: Promise<void> | undefined;
  if (readNow) {
    const read = await intakeInTurn(ctx, file, filePath, inspection, options);
    if (read === 'stopped') return result('stopped', file);
    if (!('sendingOn' in read)) return result('refused', file, read);
    sendingOn = read.sendingOn;
    options.onIntakeEnd?.(file.id);
  }
  if (options.dryRun)
    return result('planned', file, { plan: await ctx.files.planSummary(file.id) });
  const sent = await sendWithResultsAhead(ctx, file.id, sendingOn);
  if (sent.state === 'finished') {
    // A copy that paused for longer than the daemon waits may go on after the file was read:
    // filed as done, the rows it added would never be read. Refused instead, it says so, and
    // the complete file continues it.
    const grown = sizeChange(filePath, inspection);
    if (grown) {
      const changed: Refusal = {
        code: 'E_FILE_CHANGED',
        reason: `${filePath}: the file changed after it was read (${grown}): was it still being copied?`,
      };
      return result(
        'refused',
        file,
        await refuse(ctx.files, file.id, inspection.size, changed, 'before it changed'),
      );
    }
    // Committed at once: done for good before the caller files it away.
    await ctx.files.status(file.id, FILE_STATUS.done);
    return result('finished', file);
  }
  if (sent.state === 'held')
    return result('held', file, {
      held: { waitingFor: sent.waitingFor, startAt: sent.startAt },
      readNow,
    });
  return result(
    sent.state,
    file,
    sent.state === 'paused' ? { reason: sent.reason, code: sent.code } : {},
  );
}

function prunedRefusal(file: FileRecord): string {
  return `these bytes were refused before (${file.error ?? 'refused'}), and their rows were pruned on ${file.pruned_at} (SMSDROP_KEEP): read again, requests that went out then could go twice. Fix the file (a changed file is a new one), or send these bytes again on purpose with smsdrop send --resend`;
}

/**
 * How often the result file's next final pages are written while sending (~2 ms of work at most
 * each time).
 */
const RESULTS_AHEAD_MS = 10;

/**
 * The sending that went on from the reading (`sendingOn`), then sendFile, with the result file
 * written while the answers come in (see spoolResults): a file's last answer is then followed by
 * its last pages only, not by the whole file.
 */
async function sendWithResultsAhead(
  ctx: PipelineContext,
  fileId: number,
  sendingOn: Promise<void> | undefined,
): Promise<SendResult> {
  const send = async () => {
    await sendingOn;
    return sendFile(ctx, fileId);
  };
  let spool: ResultSpool;
  try {
    if (!ctx.spools) return send();
    spool = spoolResults(ctx.spools, ctx.reads, fileId);
  } catch {
    return send(); // no room for it, say: the result file is written at the end
  }
  const ticker = setInterval(spool.advance, RESULTS_AHEAD_MS).unref();
  let sent: SendResult | undefined;
  try {
    sent = await send();
  } finally {
    clearInterval(ticker);
    await (sent?.state === 'finished' ? spool.complete() : spool.discard());
  }
  return sent;
}

/**
 * Whether the record is as grownFromUnfinished found it: same bytes, not done, not being processed.
 */
async function stillUnfinished(ctx: PipelineContext, earlier: FileRecord): Promise<boolean> {
  const now = await ctx.files.file(earlier.id);
  return (
    now !== undefined &&
    now.sha256 === earlier.sha256 &&
    now.status !== FILE_STATUS.done &&
    !ctx.inProgress.has(earlier.id)
  );
}

/**
 * The unfinished file with sends whose bytes this file begins with (longest first): the same rows
 * at the same lines, so this file continues it, and what was sent is not sent again (without
 * this, the complete file would be a new file). A refused one (typically: it was still being
 * copied), or one cut short (a crash, a stop, an account pause) at this same path, which grew
 * there. Not one cut short at another path: that file resumes on its own (a daemon file waiting out
 * an account pause, say), and taken over, it would then be read as a new file and sent again. Nor
 * one being processed now.
 */
async function grownFromUnfinished(
  ctx: PipelineContext,
  filePath: string,
  inspection: FileInspection,
): Promise<FileRecord | undefined> {
  for (const earlier of await ctx.files.grownCandidates(inspection.size)) {
    // it is still being read or sent: not for this file to take over
    if (ctx.inProgress.has(earlier.id)) continue;
    if (earlier.status !== FILE_STATUS.refused && earlier.path !== path.resolve(filePath)) continue;
    // the same bytes would not read the same
    if (earlier.encoding !== inspection.encoding) continue;
    if ((await hashPrefix(filePath, earlier.size)) === earlier.sha256) return earlier;
  }
  return undefined;
}

/**
 * How the file's size differs from when it was inspected ("N bytes, now M"); undefined if it does
 * not, or it is gone (nothing more to read from it).
 */
function sizeChange(filePath: string, inspection: FileInspection): string | undefined {
  const size = statSync(filePath, { throwIfNoEntry: false })?.size;
  return size === undefined || size === inspection.size
    ? undefined
    : `${inspection.size} bytes, now ${size}`;
}
