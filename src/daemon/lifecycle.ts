// The life of one dropped file: inbox/ -> processing/ -> done/ or failed/, with the files people
// read written next to it. Results are written in a staging folder first and moved in before the
// CSV itself, so done/ and failed/ only ever hold complete files, and a CSV still in processing/
// after a crash simply runs again (the journal makes that send nothing twice).
//
// What ends where:
//   finished      done/NAME.csv + NAME.result.csv (+ NAME.rejected.csv when rows were invalid)
//   already sent  done/NAME.csv + NAME.duplicate.txt ("duplicate of ...") + the original's
//                 NAME.result.csv (+ NAME.rejected.csv); nothing is sent
//   refused       failed/NAME.csv + NAME.error.txt; nothing was sent, or (refused late, after
//                 requests went out while it was read) + NAME.result.csv naming who got them
//   not .csv      failed/NAME + NAME.error.txt, straight from inbox/
//   paused        stays in processing/, runs again after the account cooldown
//   stopped       stays in processing/, resumes at the next start
//   any error     failed/NAME.csv + NAME.error.txt (a full disk fails the file, not the daemon)
import {
  existsSync,
  mkdirSync,
  readdirSync,
  renameSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import path from 'node:path';
import {
  attemptsOf,
  type FileRecord,
  findLatestFile,
  lastProgressAt,
  noteTaken,
} from '../journal/files.js';
import { FILE_STATUS } from '../journal/states.js';
import { formatDuration } from '../log/duration.js';
import { closedMsPerDay } from '../send/window.js';
import { tightenTaken } from '../datadir/permissions.js';
import { EXCEL_ADVICE } from '../intake/index.js';
import { inspectFile } from '../intake/inspect.js';
import type { Logger } from '../log/logger.js';
import { describeError, redactSecrets } from '../log/redact.js';
import {
  type FileRunResult,
  type PipelineContext,
  processFile,
  repeatsNote,
} from '../pipeline/index.js';
import { type FileAside, recordEventNow, type WebhookEvent } from '../journal/outbox.js';
import { errorCode, SmsdropError, userError } from '../errors.js';
import { writeResultCsv } from '../results/resultCsv.js';
import { writeRejectedCsv } from '../results/rejectedCsv.js';
import { isCsvName, stemOf } from '../datadir/names.js';
import { type Folders, freeName, moveExact, moveUnique } from './folders.js';
import type { JobResult } from './pool.js';

export interface FileLife {
  folders: Folders;
  ctx: PipelineContext;
  log: Logger;
  /** Files being processed: name in processing/ -> sha256 of its bytes. */
  active: Map<string, string>;
  /**
   * sha256 -> settles when the file running those bytes returns. Same bytes never run twice at
   * once.
   */
  busy: Map<string, Promise<void>>;
  /** Settles when the account pause's cooldown is over (one cooldown shared by every file). */
  cooldown(): Promise<void>;
  /**
   * Files taken from inbox/ by this process that have not run yet: their run is asked for now
   * (noteTaken). Any other run of a file in processing/ resumes one that stopped part-way (a
   * restart, an account pause), and is held when the file has not moved lately (lateResume).
   */
  fresh: Set<string>;
}

/**
 * Moves a stable inbox file into processing/; returns its name there, or undefined if it went
 * elsewhere.
 */
export function takeFile(life: FileLife, inboxFile: string): string | undefined {
  const { folders, log } = life;
  const dropped = path.basename(inboxFile);
  try {
    if (!isCsvName(dropped)) {
      const name = moveUnique(inboxFile, folders.failed, dropped, [
        folders.processing,
        folders.done,
      ]);
      tightenTaken(path.join(folders.failed, name), life.ctx.config.shareWithGroup);
      const { code, reason, advice } = notCsvNote(dropped);
      writeFileSync(
        path.join(folders.failed, `${stemOf(name)}.error.txt`),
        errorNote(dropped, `${code}: ${reason}`, advice),
      );
      log.warn(`failed ${dropped}: ${code}: ${reason}; moved to failed/${name}`, {
        event: 'file-failed',
        file: name,
        dropped,
        code,
      });
      noteEvent(life, 'file.failed', { name, status: 'failed' }, `${code}: ${reason}`);
      return undefined;
    }
    const name = moveUnique(inboxFile, folders.processing, dropped, [folders.done, folders.failed]);
    // It holds numbers too: from now on as closed as the files smsdrop writes.
    tightenTaken(path.join(folders.processing, name), life.ctx.config.shareWithGroup);
    life.fresh.add(name);
    log.info(`taken ${dropped}${name === dropped ? '' : ` as ${name}`}`, {
      event: 'file-taken',
      file: name,
      dropped,
    });
    return name;
  } catch (err) {
    const e = err as NodeJS.ErrnoException;
    if (e.code === 'ENOENT')
      log.warn(`${dropped} disappeared from inbox/ before it could be taken`, {
        event: 'file-vanished',
        dropped,
      });
    else
      log.error(
        `cannot take ${dropped}: ${describeError(err)}; it stays in inbox/ until the next start`,
        { event: 'file-failed', dropped },
      );
    return undefined;
  }
}

const EXCEL_NAME = /\.(xlsx|xlsm|xls)$/i;

/**
 * Why a file without the .csv ending is not sent, and what to do: a workbook is saved as CSV,
 * anything else renamed.
 */
function notCsvNote(name: string): { code: string; reason: string; advice: string } {
  if (EXCEL_NAME.test(name))
    return { code: 'E_FILE_EXCEL', reason: EXCEL_ADVICE, advice: 'Nothing in it was sent.' };
  return {
    code: 'E_FILE_NOT_CSV',
    reason: 'not a .csv file; only .csv files are sent',
    advice:
      'Nothing in it was sent. If it is a CSV file, rename it to end in .csv and drop it into inbox/ again.',
  };
}

/** Runs a file of processing/ through the pipeline and files it. Never throws. */
export async function handleFile(life: FileLife, name: string): Promise<JobResult> {
  const file = path.join(life.folders.processing, name);
  if (!existsSync(file)) {
    life.log.warn(`${name} disappeared from processing/ before it could be sent`, {
      event: 'file-vanished',
      file: name,
    });
    return undefined;
  }
  // unreadable: processFile refuses it with the reason
  const inspection = await inspectFile(file, life.ctx.config.encoding).catch(() => undefined);
  const sha256 = inspection?.sha256;
  const other = sha256 ? life.busy.get(sha256) : undefined;
  if (other) {
    life.log.info(`${name}: same bytes as a file in progress; it waits for that one`, {
      event: 'file-waiting',
      file: name,
    });
    return { again: other };
  }
  let release = () => {};
  if (sha256) {
    life.busy.set(sha256, new Promise<void>((resolve) => (release = resolve)));
    life.active.set(name, sha256);
  }
  try {
    // Only once it runs: a file that waited for another with the same bytes is still fresh.
    const fresh = life.fresh.delete(name);
    if (fresh && sha256) noteTaken(life.ctx.db, sha256);
    const late = fresh || !sha256 ? undefined : lateResume(life, sha256);
    if (late) {
      await failFile(
        life,
        name,
        'E_RESUME_LATE',
        late.reason,
        late.advice,
        late.requested ? late.fileId : undefined,
      );
      noteEvent(life, 'file.late', late.fileId, late.reason);
      return undefined;
    }
    const result = await processFile(life.ctx, file, {
      name,
      ...(inspection ? { inspection } : {}),
    });
    return await settle(life, name, result);
  } catch (err) {
    if (errorCode(err) === 'E_JOURNAL_LOST') {
      // Not the file's fault: it stays in processing/, and the next start settles and resumes it.
      life.log.warn(`${name}: stopped by a journal failure; it resumes at the next start`, {
        event: 'file-stopped',
        file: name,
      });
      return undefined;
    }
    // One of smsdrop's errors (a full disk) keeps its code; anything else is a bug, said as such.
    const known = userError(err);
    await failFile(
      life,
      name,
      known?.code ?? 'E_UNEXPECTED',
      known?.message ?? describeError(err),
      SENT_SOME,
    );
    noteEvent(
      life,
      'file.failed',
      () =>
        (sha256 ? findLatestFile(life.ctx.db, sha256)?.id : undefined) ?? {
          name,
          status: 'failed',
        },
      known?.message ?? describeError(err),
    );
    return undefined;
  } finally {
    if (sha256) {
      life.busy.delete(sha256);
      life.active.delete(name);
    }
    release();
  }
}

interface LateResume {
  fileId: number;
  /** Requests went out for it (its result file says what became of each row). */
  requested: boolean;
  reason: string;
  advice: string;
}

/**
 * A file that stopped part-way and has not moved for longer than resumeWithin (field-notes: a
 * schedule long past should not fire by surprise). A campaign dropped on Monday that a crash or
 * an account problem held up until Thursday is not sent on Thursday unasked: it goes to failed/
 * with a note, and dropping it into inbox/ again sends the rest (the same bytes go on where they
 * stopped: nothing goes twice; that taking is noted, so a pause or restart after it counts from
 * it). Undefined when it may go on.
 */
function lateResume(life: FileLife, sha256: string): LateResume | undefined {
  const { db, config } = life.ctx;
  if (config.resumeWithin.ms === 0) return undefined;
  const record = findLatestFile(db, sha256);
  if (!record || (record.status !== FILE_STATUS.intake && record.status !== FILE_STATUS.sending))
    return undefined;
  const movedAt = Date.parse(lastProgressAt(db, record));
  const idleMs = Date.now() - movedAt;
  const limit = lateLimit(config);
  if (!(idleMs > limit.ms)) return undefined;
  const requested = attemptsOf(db, record.id) > 0;
  return {
    fileId: record.id,
    requested,
    reason: `not resumed: it has not moved for ${formatDuration(idleMs / 1000)} (since ${new Date(movedAt).toISOString()}), longer than ${limit.text}; a message that late could reach people by surprise`,
    advice:
      `${requested ? 'Requests went out for it before; NAME.result.csv says what became of each row. ' : 'Nothing in it was sent. '}` +
      'To send the rest now, drop this same file into inbox/ again (not a copy saved again: its rows sent longer ago than SMSDROP_REPEAT_WINDOW would go again): it goes on where it stopped, and nothing is sent twice. To leave it unsent, leave it here.',
  };
}

/**
 * How long a file may rest before it is late: resumeWithin, or longer when smsdrop's own limits
 * can keep a file waiting longer (the sending window's closed hours and a message window's span
 * together): a wait the operator set up is no surprise.
 */
export function lateLimit(config: FileLife['ctx']['config']): { ms: number; text: string } {
  const plannedMs =
    (config.sendWindow ? closedMsPerDay(config.sendWindow) : 0) + (config.messageWindow?.ms ?? 0);
  const setting = `SMSDROP_RESUME_WITHIN (${config.resumeWithin.text})`;
  if (plannedMs <= config.resumeWithin.ms) return { ms: config.resumeWithin.ms, text: setting };
  return {
    ms: plannedMs,
    text: `${formatDuration(plannedMs / 1000)}, what the sending and message windows can make a file wait (more than ${setting})`,
  };
}

async function settle(life: FileLife, name: string, result: FileRunResult): Promise<JobResult> {
  const { log } = life;
  const file = path.join(life.folders.processing, name);
  switch (result.outcome) {
    case 'finished':
      await finishFile(life, name, result);
      return undefined;
    case 'already-sent':
      // The same path means this very drop finished before a crash kept it from being filed.
      if (result.file && result.file.path === path.resolve(file) && result.file.name === name)
        await finishFile(life, name, result);
      else await fileDuplicate(life, name, result.file!);
      return undefined;
    case 'refused': {
      // Refused after requests went out while it was read: say so, and who got them.
      const sentId =
        result.file && attemptsOf(life.ctx.db, result.file.id) > 0 ? result.file.id : undefined;
      const advice =
        result.code === 'E_PROVIDER_CHANGED'
          ? PROVIDER_CHANGED
          : sentId === undefined
            ? NOTHING_SENT
            : SENT_SOME;
      await failFile(
        life,
        name,
        result.code ?? 'E_FILE_UNREADABLE',
        result.reason ?? 'refused',
        advice,
        sentId,
      );
      // A refused record wrote its file.failed event with its status; a file never recorded
      // (unreadable) did not.
      if (!result.file) noteEvent(life, 'file.failed', { name, status: 'failed' }, result.reason);
      return undefined;
    }
    case 'paused':
      log.warn(
        `${name}: sending paused (${result.reason}); ${result.counts.pending} rows wait in processing/ for the cooldown`,
        { event: 'file-paused', file: name, counts: result.counts },
      );
      return { again: life.cooldown() };
    case 'stopped':
      log.info(
        `${name}: stopped with ${result.counts.pending} rows not sent yet; it resumes at the next start`,
        { event: 'file-stopped', file: name, counts: result.counts },
      );
      return undefined;
    case 'planned':
      throw new SmsdropError('E_INTERNAL', 'a dry run has no place in the daemon');
  }
}

async function finishFile(life: FileLife, name: string, result: FileRunResult): Promise<void> {
  const reads = life.ctx.reads!; // set by openRuntime
  const fileId = result.file!.id;
  const target = await publish(life, name, life.folders.done, async (dir, stem) => {
    await writeResultCsv(reads, fileId, dir, stem, life.ctx.spools);
    await writeRejectedCsv(reads, fileId, dir, stem);
  });
  const c = result.counts;
  const troubled = c.failed + c.unknown + c.pending > 0;
  life.log[troubled ? 'warn' : 'info'](
    `finished ${name}: rows ${c.rows}, accepted ${c.accepted}, invalid ${c.invalid}, duplicates ${c.duplicates}, failed ${c.failed}, unknown ${c.unknown}, requests ${c.requests}, ${(result.elapsedMs / 1000).toFixed(1)} s -> done/${target}`,
    { event: 'file-finished', file: target, counts: c, elapsedMs: result.elapsedMs },
  );
  const repeats = repeatsNote(c, life.ctx.config.repeatWindow, result.waiting);
  if (repeats)
    life.log.warn(`${name}: ${repeats}`, {
      event: 'file-repeats',
      file: target,
      repeats: c.repeats,
    });
  checkLateGrowth(life, target, result.file!.size);
}

/**
 * The file's size, or undefined when it cannot be read (gone, moved, or an error such as EACCES):
 * this runs in a timer, where a throw would take the whole daemon down.
 */
function sizeNow(file: string): number | undefined {
  try {
    return statSync(file, { throwIfNoEntry: false })?.size;
  } catch {
    return undefined;
  }
}

/**
 * A copy that paused for longer than the stability time may go on writing after the file was
 * read, sent and filed: it writes on into done/ (the rename moved the file it writes), and the
 * bytes added then were never read. The file is looked at again a while later (four stability
 * times: what a file whose end is not a line break waits); grown, it says so loudly, in the log
 * and next to it. (Only while the daemon runs: after a restart nothing looks again.)
 */
function checkLateGrowth(life: FileLife, target: string, size: number): void {
  const delay = Math.max(life.ctx.config.stabilityMs * 4, 1000);
  setTimeout(() => {
    // the daemon is stopping: its log may be closed already
    if (life.ctx.stopSignal?.aborted) return;
    const file = path.join(life.folders.done, target);
    const now = sizeNow(file);
    if (now === undefined || now === size) return;
    const note = path.join(life.folders.done, `${stemOf(target)}.grown.txt`);
    const window = life.ctx.config.repeatWindow;
    const what =
      `${target} grew after it was read and sent (${size} bytes, now ${now}): it was still being copied. The rows added since were not sent. ` +
      (window && window.ms > 0
        ? `Drop the complete file into inbox/ again within ${window.text} of this send: its rows that went out are then repeats, not sent twice, and the rest go.`
        : 'Drop a file of only the rows added into inbox/ (with the repeat window off, the complete file would send every row again).');
    try {
      life.log.error(what, { event: 'file-grew-after-done', file: target, size, now });
    } catch {
      // the log closed meanwhile: the note below still says it
    }
    try {
      writeFileSync(note, `${what}\n`);
    } catch {
      // no room for the note: the log line said it
    }
  }, delay).unref();
}

async function fileDuplicate(life: FileLife, name: string, original: FileRecord): Promise<void> {
  const reads = life.ctx.reads!; // set by openRuntime
  const target = await publish(life, name, life.folders.done, async (dir, stem) => {
    writeFileSync(path.join(dir, `${stem}.duplicate.txt`), duplicateNote(name, original, stem));
    // A pruned original has no rows left to write results from: the note says so.
    if (original.pruned_at !== null) return;
    await writeResultCsv(reads, original.id, dir, stem, life.ctx.spools);
    await writeRejectedCsv(reads, original.id, dir, stem);
  });
  life.log.info(
    `duplicate ${name}: same bytes as ${original.name}, already sent (finished ${original.finished_at ?? '?'}); nothing sent -> done/${target}`,
    {
      event: 'file-duplicate',
      file: target,
      duplicateOf: original.name,
      sha256: original.sha256,
    },
  );
}

/**
 * A webhook event whose news is a move in the file system (to failed/), not a journal write:
 * written right after, in a transaction of its own. Never throws: the file is filed already.
 */
function noteEvent(
  life: FileLife,
  event: WebhookEvent,
  file: number | FileAside | (() => number | FileAside),
  reason?: string,
): void {
  if (life.ctx.db.webhookTargets.length === 0) return;
  try {
    recordEventNow(
      life.ctx.db,
      event,
      typeof file === 'function' ? file() : file,
      reason === undefined ? undefined : redactSecrets(reason),
    );
  } catch (err) {
    life.log.warn(`cannot record the ${event} webhook event in the journal: ${describeError(err)}`);
  }
}

const NOTHING_SENT = 'Nothing in it was sent. Fix the file and drop it into inbox/ again.';
// Failed, not left in processing/: a daemon restarted with other settings would otherwise retry it
// at every start, unseen.
const PROVIDER_CHANGED =
  'Nothing more of it was sent; the journal keeps what was. With the provider settings set back to the ones it was planned for, drop this same file into inbox/ again: it goes on where it stopped, and nothing is sent twice.';
const SENT_SOME =
  'Some rows may have been sent before this happened; the journal remembers them. Once the cause is fixed, drop the same file into inbox/ again: only what was not sent yet is sent (if everything was, you get its results).';

/**
 * Files a file under failed/ with NAME.error.txt; if even that fails, leaves it where it is. Never
 * throws.
 */
async function failFile(
  life: FileLife,
  name: string,
  code: string,
  reason: string,
  advice: string,
  resultsOf?: number,
): Promise<void> {
  const { log, folders } = life;
  const file = path.join(folders.processing, name);
  // The reason names the file where it was read (processing/); the note lies next to it elsewhere.
  const clean = `${code}: ${redactSecrets(reason).split(file).join(name)}`;
  try {
    const target = await publish(life, name, folders.failed, async (dir, stem) => {
      writeFileSync(path.join(dir, `${stem}.error.txt`), errorNote(name, clean, advice));
      if (resultsOf !== undefined)
        await writeResultCsv(life.ctx.reads!, resultsOf, dir, stem, life.ctx.spools);
    });
    log.error(`failed ${name}: ${clean} -> failed/${target}`, {
      event: 'file-failed',
      file: target,
      code,
    });
  } catch (err) {
    // No room even for a note (full disk?): a rename needs none, so at least take it out of the
    // way.
    try {
      const target = moveUnique(file, folders.failed, name, [folders.done]);
      log.error(
        `failed ${name}: ${clean}; no ${stemOf(target)}.error.txt (${describeError(err)}) -> failed/${target}`,
        { event: 'file-failed', file: target, code },
      );
    } catch (moveErr) {
      log.error(
        `failed ${name}: ${clean}; it stays in processing/ and is tried again at the next start (${describeError(moveErr)})`,
        { event: 'file-failed', file: name, code },
      );
    }
  }
}

/**
 * Writes a file's companions in a staging folder, moves them into `dir`, then moves the CSV; the
 * name is free in done/ and failed/ so a file and its results always match. Returns the name used.
 */
async function publish(
  life: FileLife,
  name: string,
  dir: string,
  writeCompanions: (stagingDir: string, stem: string) => Promise<void>,
): Promise<string> {
  const { folders } = life;
  const target = freeName(name, [folders.done, folders.failed]);
  const staging = path.join(folders.processing, `.staging-${target}`);
  rmSync(staging, { recursive: true, force: true });
  mkdirSync(staging);
  try {
    await writeCompanions(staging, stemOf(target));
    for (const companion of readdirSync(staging))
      renameSync(path.join(staging, companion), path.join(dir, companion));
  } finally {
    rmSync(staging, { recursive: true, force: true });
  }
  const from = path.join(folders.processing, name);
  try {
    moveExact(from, path.join(dir, target));
    return target;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    // someone else wrote there meanwhile
    return moveUnique(from, dir, target, [folders.done, folders.failed]);
  }
}

function errorNote(name: string, reason: string, advice: string): string {
  return [
    `${name}: not sent`,
    '',
    `reason: ${reason}`,
    `when:   ${new Date().toISOString()}`,
    '',
    advice,
    '',
  ].join('\n');
}

function duplicateNote(name: string, original: FileRecord, stem: string): string {
  return [
    `duplicate of ${original.name}`,
    '',
    `${name} has the same bytes (sha256 ${original.sha256}) as ${original.name}, which was sent`,
    `(finished ${original.finished_at ?? 'earlier'}). Nothing was sent for ${name}.`,
    original.pruned_at === null
      ? `${stem}.result.csv holds the results of ${original.name}.`
      : `Its rows were pruned on ${original.pruned_at} (SMSDROP_KEEP): \`smsdrop report ${original.id}\` still has its counts, no longer who got it.`,
    '',
    'To send the same file again on purpose: smsdrop send --resend FILE',
    '',
  ].join('\n');
}
