// One file through the whole pipeline: inspect (hash, encoding) -> intake into the journal ->
// plan -> send -> final counts. Used by `smsdrop send` and by the daemon for each dropped file.
// Every step is resumable from the journal, so the same bytes given again continue where the
// last run stopped, and a finished file is never sent again unless a resend is asked for.
import { statSync } from 'node:fs';
import { setImmediate as nextTurn } from 'node:timers/promises';
import path from 'node:path';
import {
  adoptGrownFile,
  attemptsOf,
  countFile,
  createFile,
  discardIntake,
  type FileCounts,
  type FileRecord,
  findLatestFile,
  getFile,
  type KeptRows,
  recountFile,
  restartIntake,
  setFileHeader,
  setFileEncoding,
  setFileProvider,
  setFileStatus,
  unfinishedWithSends,
  type WaitingFile,
  waitingRepeats,
} from '../journal/files.js';
import type { Journal } from '../journal/open.js';
import { planSummary as planSummaryOf } from '../journal/reads.js';
import { commitBulk } from '../journal/bulk.js';
import { type ErrorCode, errorCode, isMachineCode, SmsdropError, userError } from '../errors.js';
import { BUILT_IN_SIMULATOR } from '../provider/connect.js';
import { writeQueueFor } from '../journal/writeQueue.js';
import { replayIntents } from '../journal/intents.js';
import { createRowWriter, type RowToJournal } from '../plan/rowWriter.js';
import { FILE_STATUS } from '../journal/states.js';
import { type FileInspection, hashPrefix, inspectFile } from '../intake/inspect.js';
import { FileRefusedError } from '../intake/errors.js';
import { encodingRefusal } from '../intake/readings.js';
import { MAX_RECORD_CHARS, readRows } from '../intake/index.js';
import type { RepeatWindow } from '../config/settings/durations.js';
import { type SentBeforeLookup, sentBeforeLookup } from '../journal/sentBefore.js';
import { GroupCounts } from '../intake/groupCounts.js';
import { sendFile, type SendContext, type SendResult } from '../send/index.js';
import { type ResultSpool, type ResultSpools, spoolResults } from '../results/spool.js';
import { sendWhileReading } from '../send/whileReading.js';
import type { IntakeOptions, IntakeRow } from '../intake/row.js';
import type { FileStore, ReadStore } from '../ports/index.js';

export interface PipelineContext extends SendContext {
  /** @deprecated the journal itself; goes once every caller uses the ports (files, reads). */
  db: Journal;
  /** The journal's files and reads (ports); optional until every caller passes them. */
  files?: FileStore;
  reads?: ReadStore;
  /** appId for files without an appId column. */
  defaultAppId: string | undefined;
  /**
   * The provider and account requests go to (providerIdentity), recorded with each file planned;
   * none: not recorded or checked (a dry run).
   */
  provider?: string;
  /** The process's result spools (a dry run has none: nothing to write ahead). */
  spools?: ResultSpools;
}

export interface ProcessOptions {
  /**
   * Send again a file whose bytes were already sent (a new generation), and every row whose
   * message another file already sent the same number (the repeat window is not asked).
   */
  resend?: boolean;
  /** Stop after planning: nothing is sent. Use with a throwaway journal. */
  dryRun?: boolean;
  /** Name to record (default: the file's base name). */
  name?: string;
  /** The file's inspection, when the caller already made it (the daemon hashes every drop). */
  inspection?: FileInspection;
  /**
   * Other files' rows, for the repeat window (sentBefore.ts). Default: this journal's. A dry run
   * plans in a journal of its own and gives the real journal's.
   */
  sentBefore?: (fileId: number) => SentBeforeLookup | undefined;
}

export interface PlanSummary {
  groups: number;
  requests: number;
  numbers: number;
}

export type FileOutcome =
  'finished' | 'already-sent' | 'paused' | 'stopped' | 'refused' | 'planned';

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
  pending: 0,
  requests: 0,
};

export async function processFile(
  ctx: PipelineContext,
  filePath: string,
  options: ProcessOptions = {},
): Promise<FileRunResult> {
  const started = Date.now();
  const result = (
    outcome: FileOutcome,
    file: FileRecord | undefined,
    extra: Partial<FileRunResult> = {},
  ): FileRunResult => {
    const counts = file ? countFile(ctx.db, file.id) : EMPTY_COUNTS;
    const busy = filesInProgress(ctx.db);
    const waiting =
      file && counts.repeats > 0
        ? waitingRepeats(ctx.db, file.id).map((w) => ({ ...w, inProgress: busy.has(w.id) }))
        : [];
    return {
      outcome,
      ...(file ? { file: getFile(ctx.db, file.id)!, sha256: file.sha256 } : {}),
      counts,
      ...(waiting.length > 0 ? { waiting } : {}),
      elapsedMs: Date.now() - started,
      ...extra,
    };
  };

  let inspection = options.inspection;
  try {
    inspection ??= await inspectFile(filePath, ctx.config.encoding);
  } catch (err) {
    return result('refused', undefined, refusalOf(filePath, err));
  }
  let file = findLatestFile(ctx.db, inspection.sha256);
  if (file?.status === FILE_STATUS.done && !options.resend) return result('already-sent', file);
  // Read again, a refused file would continue from its rows; they were pruned, and what went out
  // then with them.
  if (file?.status === FILE_STATUS.refused && file.pruned_at !== null && !options.resend)
    return result('refused', file, { code: 'E_FILE_PRUNED', reason: prunedRefusal(file) });
  if (file && file.status !== FILE_STATUS.done) {
    // Refused with nothing sent, it is read anew from its first row: for the provider of now.
    const anew = file.status === FILE_STATUS.refused && attemptsOf(ctx.db, file.id) === 0;
    if (anew && ctx.provider) setFileProvider(ctx.db, file.id, ctx.provider);
    if (anew) setFileEncoding(ctx.db, file.id, inspection.encoding);
    const changed = anew ? undefined : providerChange(file, ctx.provider);
    if (changed) return result('refused', file, { code: changed.code, reason: changed.message });
  }
  if (!file || file.status === FILE_STATUS.done) {
    const identity = {
      sha256: inspection.sha256,
      name: options.name ?? path.basename(filePath),
      path: path.resolve(filePath),
      size: inspection.size,
      encoding: inspection.encoding,
      ...(ctx.provider ? { provider: ctx.provider } : {}),
    };
    const grownFrom =
      file || options.resend ? undefined : await grownFromUnfinished(ctx.db, filePath, inspection);
    const changed = grownFrom && providerChange(grownFrom, ctx.provider);
    if (changed)
      return result('refused', grownFrom, { code: changed.code, reason: changed.message });
    // Asked again after those awaits, with nothing in between: another file may have taken it over.
    file =
      grownFrom && stillUnfinished(ctx.db, grownFrom)
        ? adoptGrownFile(ctx.db, grownFrom.id, identity)
        : createFile(ctx.db, identity);
  }
  const inProgress = filesInProgress(ctx.db);
  if (inProgress.has(file.id))
    throw new SmsdropError(
      'E_INTERNAL',
      `${filePath}: its journal record (file ${file.id}) is already being processed`,
    );
  inProgress.add(file.id);
  try {
    return await runFile(ctx, file, filePath, inspection, options, result);
  } finally {
    inProgress.delete(file.id);
  }
}

async function runFile(
  ctx: PipelineContext,
  file: FileRecord,
  filePath: string,
  inspection: FileInspection,
  options: ProcessOptions,
  result: (
    outcome: FileOutcome,
    file: FileRecord | undefined,
    extra?: Partial<FileRunResult>,
  ) => FileRunResult,
): Promise<FileRunResult> {
  if (file.status === FILE_STATUS.intake || file.status === FILE_STATUS.refused) {
    const turnOver = await intakeTurn(ctx.db);
    let refusal: Refusal | undefined;
    try {
      // A stop that came while another file was read: this one is read at the next start.
      if (ctx.stopSignal?.aborted) return result('stopped', file);
      const sentBefore = options.resend
        ? undefined
        : (
            options.sentBefore ??
            ((id) => sentBeforeLookup(ctx.db, id, ctx.config.repeatWindow ?? NO_WINDOW))
          )(file.id);
      refusal = await intake(ctx, file, filePath, inspection, {
        dryRun: options.dryRun === true,
        sentBefore,
        turnOver,
      });
    } finally {
      turnOver();
    }
    if (refusal) return result('refused', file, refusal);
  }
  if (options.dryRun) return result('planned', file, { plan: planSummary(ctx.db, file.id) });
  const sent = await sendWithResultsAhead(ctx, file.id);
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
        refuse(ctx.db, file.id, inspection.size, changed, 'before it changed'),
      );
    }
    setFileStatus(ctx.db, file.id, FILE_STATUS.done);
    // Another file's intake may hold the journal's transaction open (intents.ts): commit, so that
    // the file is done for good before the caller files it away.
    commitBulk(ctx.db);
    return result('finished', file);
  }
  return result(
    sent.state,
    file,
    sent.state === 'paused' ? { reason: sent.reason, code: sent.code } : {},
  );
}

const NO_WINDOW: RepeatWindow = { ms: 0, text: 'off' };

function prunedRefusal(file: FileRecord): string {
  return `these bytes were refused before (${file.error ?? 'refused'}), and their rows were pruned on ${file.pruned_at} (SMSDROP_KEEP): read again, requests that went out then could go twice. Fix the file (a changed file is a new one), or send these bytes again on purpose with smsdrop send --resend`;
}

/**
 * Intakes of one journal run one after the other. A file's rows are checked against the rows of
 * the files read before it (sentBefore.ts): two copies of a list read at once would each miss the
 * other's. Reading is the main thread's work anyway, so two at once were no quicker; the files
 * already read go on sending meanwhile. Resolves, once the intakes before have ended theirs, to
 * the function that ends this one's turn (called once its rows are all in the journal; calling
 * it again does nothing).
 */
async function intakeTurn(db: Journal): Promise<() => void> {
  const before = db.lastIntakeTurn;
  let turnOver!: () => void;
  const mine = new Promise<void>((resolve) => (turnOver = resolve));
  db.lastIntakeTurn = before.then(() => mine);
  await before;
  return turnOver;
}

/**
 * How often the result file's next final pages are written while sending (~2 ms of work at most
 * each time).
 */
const RESULTS_AHEAD_MS = 10;

/**
 * sendFile, with the result file written while the answers come in (see spoolResults): a file's
 * last answer is then followed by its last pages only, not by the whole file.
 */
async function sendWithResultsAhead(ctx: PipelineContext, fileId: number): Promise<SendResult> {
  let spool: ResultSpool;
  try {
    if (!ctx.spools || !ctx.reads) return sendFile(ctx, fileId);
    spool = spoolResults(ctx.spools, ctx.reads, fileId);
  } catch {
    return sendFile(ctx, fileId); // no room for it, say: the result file is written at the end
  }
  const ticker = setInterval(spool.advance, RESULTS_AHEAD_MS).unref();
  let sent: SendResult | undefined;
  try {
    sent = await sendFile(ctx, fileId);
  } finally {
    clearInterval(ticker);
    await (sent?.state === 'finished' ? spool.complete() : spool.discard());
  }
  return sent;
}

/**
 * Reads every row into the journal. Returns the refusal when the file as a whole is refused.
 * Batches that take no more numbers (full, or their group's last row read) are sent while reading
 * goes on, when that is allowed (see mayOverlap).
 */
async function intake(
  ctx: PipelineContext,
  file: FileRecord,
  filePath: string,
  inspection: FileInspection,
  {
    dryRun,
    sentBefore,
    turnOver,
  }: { dryRun: boolean; sentBefore: SentBeforeLookup | undefined; turnOver: () => void },
): Promise<Refusal | undefined> {
  const kept = restartIntake(ctx.db, file.id);
  setFileStatus(ctx.db, file.id, FILE_STATUS.intake);
  const unreadable = encodingRefusal(filePath, inspection);
  if (unreadable) return refuse(ctx.db, file.id, inspection.size, refusalOf(filePath, unreadable));
  // Aborted when reading is over, refused or not: the requests started by then are let finish, and
  // sendFile takes over (the part-full batches released at the end, the retries).
  const readingOver = new AbortController();
  const overlap = mayOverlap(ctx, inspection, dryRun);
  // So that a group's last batch can go once its last row is read, not after the whole file.
  // Counted while intake reads: full batches can go before the count is done.
  const groupCounts = overlap
    ? GroupCounts.start(filePath, readOptions(ctx, inspection))
    : undefined;
  const sending = overlap
    ? sendWhileReading(withStop(ctx, readingOver.signal), file.id)
    : undefined;
  const writer = createRowWriter(ctx.db, file.id, {
    maxPerRequest: ctx.config.maxPerRequest,
    rowsKept: kept.lines.length,
    fileBytes: inspection.size,
    ...(sending ? { onRelease: sending.released } : {}),
    ...(groupCounts ? { groupCounts } : {}),
    ...(sentBefore ? { sentBefore } : {}),
  });
  try {
    const markKept = keptRowMarker(kept);
    for await (const chunk of readRows(filePath, {
      ...readOptions(ctx, inspection),
      onHeader: headerTaker(ctx.db, file.id, groupCounts),
    })) {
      writer.write(markKept(chunk));
      if (!sending) continue;
      // Before a batch filled by these rows can go: a file still growing may end in half a row.
      assertUnchanged(filePath, inspection);
      await letSendingRun(ctx.db);
    }
    writer.finish();
    assertUnchanged(filePath, inspection);
  } catch (err) {
    readingOver.abort();
    await groupCounts?.stop();
    try {
      writer.abandon(); // so that, if requests went out and the rows stay, the counts add up
    } catch {
      // The journal itself failed (a full disk?): the refusal below says what matters.
    }
    commitBulk(ctx.db);
    // The turn is kept until the requests in flight are settled and the refusal recorded: the next
    // file would otherwise leave to this one a number whose request then fails, and a refused
    // file's failed rows cannot be retried (it is given again instead). Refusals are rare: the
    // next file then waits with this one's queued requests for a slot (through another file's
    // sending window, at worst).
    // its requests are recorded either way; the refusal is the news
    await sending?.done.catch(() => {});
    return refuse(ctx.db, file.id, inspection.size, refusalOf(filePath, err));
  }
  readingOver.abort();
  await groupCounts?.stop();
  // Every row is in the journal and every batch planned: status sending, so that the next file's
  // intake counts this one's planned rows (sentBefore.ts), and its turn can start. The requests in
  // flight can wait long for a slot (other files' requests hold them through a sending window);
  // one of them that fails leaves a failed row here, which `smsdrop retry` of this file sends.
  setFileStatus(ctx.db, file.id, FILE_STATUS.sending);
  turnOver();
  await sending?.done;
  return undefined;
}

/**
 * Turns of the event loop intake gives the requests in flight after each chunk, at most: the
 * turn their answers arrive in, and the one that journals them with the next attempts (below).
 * Each turn with writes commits the intake's transaction, so more turns would cost CPU.
 */
const TURNS_FOR_SENDING = 3;

/**
 * The parser hands over rows without a turn of the event loop until it needs more bytes (one read
 * of 64 KB: ~2,000 rows), so intake gives the requests in flight turns after each chunk. An
 * answer becomes the next request at the next turn (its outcome and the next attempt are
 * journalled together, then the request leaves; see writeQueue.ts and sendBatch). So intake
 * waits while journal writes are waiting, a few turns at most, so that a steady flow of answers
 * cannot stop the reading.
 */
async function letSendingRun(db: Journal): Promise<void> {
  const journal = writeQueueFor(db);
  for (let turn = 0; turn < TURNS_FOR_SENDING; turn++) {
    await nextTurn();
    if (!journal.waiting()) return;
  }
}

/**
 * Whether the record is as grownFromUnfinished found it: same bytes, not done, not being processed.
 */
function stillUnfinished(db: Journal, earlier: FileRecord): boolean {
  const now = getFile(db, earlier.id);
  return (
    now !== undefined &&
    now.sha256 === earlier.sha256 &&
    now.status !== FILE_STATUS.done &&
    !filesInProgress(db).has(earlier.id)
  );
}

/** Journal records of files being processed now (the daemon runs several at once). */
function filesInProgress(db: Journal): Set<number> {
  return db.filesInProgress;
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
  db: Journal,
  filePath: string,
  inspection: FileInspection,
): Promise<FileRecord | undefined> {
  const busy = filesInProgress(db);
  for (const earlier of unfinishedWithSends(db, inspection.size)) {
    // it is still being read or sent: not for this file to take over
    if (busy.has(earlier.id)) continue;
    if (earlier.status !== FILE_STATUS.refused && earlier.path !== path.resolve(filePath)) continue;
    // the same bytes would not read the same
    if (earlier.encoding !== inspection.encoding) continue;
    if ((await hashPrefix(filePath, earlier.size)) === earlier.sha256) return earlier;
  }
  return undefined;
}

/**
 * Sending may start before the last row is read only when nothing found later can refuse the
 * file: csv-parse, with intake's options, can fail partway only on a double quote, or on a record
 * past its size limit (a line that long). Such a file is read to the end first, so a broken quote
 * or a huge line near its end still leaves nothing sent.
 */
function mayOverlap(ctx: PipelineContext, inspection: FileInspection, dryRun: boolean): boolean {
  return (
    ctx.config.sendDuringIntake &&
    !inspection.quoted &&
    inspection.longestLine <= MAX_RECORD_CHARS &&
    !dryRun
  );
}

function withStop(ctx: PipelineContext, signal: AbortSignal): PipelineContext {
  return {
    ...ctx,
    stopSignal: ctx.stopSignal ? AbortSignal.any([ctx.stopSignal, signal]) : signal,
  };
}

function readOptions(ctx: PipelineContext, inspection: FileInspection): IntakeOptions {
  return {
    encoding: inspection.encoding,
    bytes: inspection.size,
    allowInternational: ctx.config.allowInternational,
    maxValueChars: ctx.config.maxValueChars,
    decodedExactly: inspection.exact,
    quoted: inspection.quoted,
    ...(ctx.defaultAppId ? { defaultAppId: ctx.defaultAppId } : {}),
    ...(ctx.config.templateId ? { defaultTemplateId: ctx.config.templateId } : {}),
    ...(ctx.config.templates ? { templates: ctx.config.templates } : {}),
  };
}

/**
 * Records the file's header. Group counts made under another header than intake read say nothing.
 */
function headerTaker(
  db: Journal,
  fileId: number,
  groupCounts: GroupCounts | undefined,
): IntakeOptions['onHeader'] {
  return (map, extraNames) => {
    groupCounts?.headerRead(map.header);
    setFileHeader(db, fileId, { columns: map.header, extras: extraNames });
  };
}

/** Marks the rows an interrupted intake left in the journal (ascending lines, like the chunks). */
function keptRowMarker(kept: KeptRows): (chunk: IntakeRow[]) => RowToJournal[] {
  let next = 0;
  return (chunk) => {
    if (next >= kept.lines.length) return chunk;
    return chunk.map((row) => {
      while (next < kept.lines.length && kept.lines[next]! < row.line) next++;
      return kept.lines[next] === row.line ? { ...row, keptRowId: kept.ids[next]! } : row;
    });
  };
}

/**
 * The file is refused. When nothing was sent, its rows are dropped, as if never read. When
 * requests went out while it was read, those stay recorded, and the same bytes given again
 * continue from there (restartIntake): dropping them would send the same numbers twice.
 */
function refuse(
  db: Journal,
  fileId: number,
  size: number,
  { code, reason }: Refusal,
  sentWhen = 'while the file was being read',
): Refusal {
  // A journal that rolled back its open transaction lost attempts that intents still name. (Its
  // other writes committed first: replay reads the journal as committed.)
  commitBulk(db);
  replayIntents(db);
  const sent = attemptsOf(db, fileId);
  if (sent === 0) {
    discardIntake(db, fileId);
    setFileStatus(db, fileId, FILE_STATUS.refused, reason);
    return { code, reason };
  }
  const told =
    `${reason}. But ${sent} request(s) had already gone out ${sentWhen}: the result file names who got them. ` +
    `Giving smsdrop the file again, as it was or once complete, sends only the rest (a file that begins with the same ${size} bytes continues this one); ` +
    'a copy saved otherwise is a new file: its rows that went out are not sent again within the repeat window (SMSDROP_REPEAT_WINDOW), but a row whose values changed is a new message and is sent';
  recountFile(db, fileId); // what was read is kept, so the counts must add up
  setFileStatus(db, fileId, FILE_STATUS.refused, told);
  return { code, reason: told };
}

/**
 * A file still being written after it was taken would lose the rows added late: refuse it whole.
 */
function assertUnchanged(filePath: string, inspection: FileInspection): void {
  const size = statSync(filePath).size; // a file gone while it is read is refused too
  if (size !== inspection.size) {
    throw new FileRefusedError(
      'E_FILE_CHANGED',
      filePath,
      `the file changed while it was being read (${inspection.size} bytes, now ${size}): drop it again once it is complete`,
    );
  }
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

/**
 * The refusal to go on with a file planned for another provider or account than `provider`
 * (E_PROVIDER_CHANGED), or undefined. Its rows were planned for that account (its appIds, its
 * templates), and requests went there; sent on elsewhere, the rest would go from an account nobody
 * meant, or, planned for the built-in simulator, reach people whose list's first part never did.
 */
export function providerChange(
  file: FileRecord,
  provider: string | undefined,
): SmsdropError | undefined {
  if (!provider || !file.provider || file.provider === provider) return undefined;
  const fresh =
    file.provider === BUILT_IN_SIMULATOR
      ? '; to send it for real from its first row, use a new data directory (SMSDROP_DATA_DIR)'
      : '';
  return new SmsdropError(
    'E_PROVIDER_CHANGED',
    `${file.name} (file ${file.id}) was planned for ${file.provider}, but the provider settings now name ${provider}: it is not sent on with another provider or account. Set the provider settings back to finish it${fresh}`,
  );
}

/** Why a file is refused, with its stable code. */
export interface Refusal {
  code: ErrorCode;
  reason: string;
}

/**
 * The refusal an error makes, told apart by its code (userError maps SQLite's and the system's).
 */
function refusalOf(filePath: string, err: unknown): Refusal {
  const known = userError(err);
  const e = err as NodeJS.ErrnoException;
  // The journal's own failures (a full disk under it, any SQLite error) are not the file's fault:
  // say which it was.
  if (known && isMachineCode(known.code))
    return {
      code: known.code,
      reason: `${filePath}: the journal could not record it: ${known.message}`,
    };
  if (errorCode(err)?.startsWith('SQLITE_'))
    return {
      code: 'E_JOURNAL_WRITE',
      reason: `${filePath}: the journal could not record it: ${e.code} ${e.message}`,
    };
  if (known) return { code: known.code, reason: known.message };
  return {
    code: 'E_FILE_UNREADABLE',
    reason: `${filePath}: cannot read the file: ${e.code ? `${e.code} ` : ''}${e.message ?? String(err)}`,
  };
}

/**
 * What to tell about a file's rows that other files had sent (the repeat window), or undefined
 * when there were none: the one event of this kind an operator must not miss.
 */
export function repeatsNote(
  counts: FileCounts,
  window: RepeatWindow | undefined,
  waiting: readonly WaitingFile[] = [],
): string | undefined {
  if (counts.repeats === 0) return undefined;
  const notYet = waiting.reduce((n, w) => n + w.rows, 0);
  const sending = waiting.filter((w) => w.inProgress);
  const idle = waitingNote(waiting);
  return (
    `${counts.repeats} row(s) not sent: another file sent the same message to their number${window ? ` within the repeat window (${window.text})` : ''}` +
    `${notYet > 0 ? ' or will' : ''}, so they count as duplicates (the result file names the file and line of each); to send them all the same: smsdrop send --resend FILE` +
    (sending.length > 0 ? `. Still being sent with ${namedFiles(sending)}` : '') +
    (idle ? `. ${idle}` : '')
  );
}

const namedFiles = (files: readonly WaitingFile[]) =>
  files.map((w) => `${w.name} (id ${w.id}): ${w.rows}`).join(', ');

/**
 * Every row of the file accepted: none invalid, failed, unknown or pending, and none of its
 * repeats left to a file that is not being sent now (nothing sends those until it goes on).
 * What exit 0 means for send and resume.
 */
export function everyRowAccepted(c: FileCounts, waiting: readonly WaitingFile[] = []): boolean {
  return c.invalid + c.failed + c.unknown + c.pending === 0 && !waiting.some((w) => !w.inProgress);
}

/**
 * Repeats left to files that are not being sent now (nothing sends them until those files go on),
 * named with how they go on; undefined when there are none. Used by send, retry and resume.
 */
export function waitingNote(waiting: readonly WaitingFile[]): string | undefined {
  const idle = waiting.filter((w) => !w.inProgress);
  return idle.length > 0
    ? `Not sent yet, waiting in ${namedFiles(idle)}: they go when that file goes on (${goesOn(idle)})`
    : undefined;
}

/**
 * How the idle files holding a file's repeats go on: given again; one read to the end, also from
 * the journal.
 */
function goesOn(idle: readonly WaitingFile[]): string {
  const resumable = idle.every((w) => w.status === FILE_STATUS.sending);
  return resumable
    ? 'give it again, or, its bytes gone or changed, smsdrop resume ID'
    : 'give it again: the same bytes continue it';
}

export function planSummary(db: Journal, fileId: number): PlanSummary {
  return planSummaryOf(db, fileId);
}
