// Filing a file that ran: done/ or failed/, with the files people read written next to it first
// (NAME.result.csv, NAME.rejected.csv, NAME.duplicate.txt, NAME.error.txt), so done/ and failed/
// only ever hold complete files.
import { setTimeout as sleep } from 'node:timers/promises';
import { mkdirSync, readdirSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { FileRecord } from '../ports/index.js';
import { writeResultCsv } from '../results/resultCsv.js';
import { writeRejectedCsv } from '../results/rejectedCsv.js';
import { describeError, redactSecrets } from '../log/redact.js';
import { type FileRunResult, repeatsNote } from '../pipeline/index.js';
import { SmsdropError } from '../errors.js';
import { stemOf } from '../datadir/names.js';
import { errorNote, type FileLife, noteEvent } from './fileLife.js';
import { freeName, moveExact, moveUnique, writeWhole } from './folders.js';
import type { JobResult } from './pool.js';
import { heldFile } from './held.js';
import { nodesCarryingOn } from '../pipeline/otherNodes.js';
import { sinceTakenMs } from '../journalRules/runs.js';
import { formatDuration } from '../log/duration.js';

/**
 * How long a copy of bytes another node reads waits before it is looked at again: by then that
 * node has finished it (the copy is then filed with its results), or is gone (this one goes on).
 */
export const ELSEWHERE_WAIT_MS = 5_000;

export async function settle(
  life: FileLife,
  name: string,
  result: FileRunResult,
): Promise<JobResult> {
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
        result.file && (await life.files.requestsMade(result.file.id)) > 0
          ? result.file.id
          : undefined;
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
      if (!result.file)
        await noteEvent(life, 'file.failed', { name, status: 'failed' }, result.reason);
      return undefined;
    }
    case 'held':
      return heldFile(life, name, result);
    case 'stopped':
      return stopped(life, name, result);
    case 'paused':
    case 'elsewhere':
      return later(life, name, result);
    case 'planned':
      throw new SmsdropError('E_INTERNAL', 'a dry run has no place in the daemon');
  }
}

/** A file that stays in processing/: sent on after the cooldown, or later, or at the next start. */
function later(life: FileLife, name: string, result: FileRunResult): JobResult {
  const { log } = life;
  switch (result.outcome) {
    case 'paused':
      log.warn(
        `${name}: sending paused (${result.reason}); ${result.counts.pending} rows wait in processing/ for the cooldown`,
        { event: 'file-paused', file: name, counts: result.counts },
      );
      return { again: life.cooldown() };
    case 'elsewhere':
      log.info(
        `${name}: ${result.reason}; this copy waits in processing/ and is looked at again in ${ELSEWHERE_WAIT_MS / 1000} s`,
        { event: 'file-elsewhere', file: name },
      );
      return { again: sleep(ELSEWHERE_WAIT_MS, undefined, { ref: false }) };
    default:
      return undefined;
  }
}

/**
 * A file this node stopped sending stays in processing/, and is filed at the next start; its rows
 * go out before that when other live nodes share the journal (they send its batches).
 */
async function stopped(life: FileLife, name: string, result: FileRunResult): Promise<JobResult> {
  const others = await nodesCarryingOn(life.ctx, result.file?.status);
  const rest =
    others.length > 0
      ? `the other nodes (${others.join(', ')}) send them now; the file is filed here at the next start`
      : 'it resumes at the next start';
  life.log.info(`${name}: stopped with ${result.counts.pending} rows not sent yet; ${rest}`, {
    event: 'file-stopped',
    file: name,
    counts: result.counts,
    ...(others.length > 0 ? { carriedOnBy: others } : {}),
  });
  return undefined;
}

async function finishFile(life: FileLife, name: string, result: FileRunResult): Promise<void> {
  const reads = life.ctx.reads; // set by openRuntime
  const fileId = result.file!.id;
  const target = await publish(life, name, life.folders.done, async (dir, stem) => {
    await writeResultCsv(reads, fileId, dir, stem, life.ctx.spools);
    await writeRejectedCsv(reads, fileId, dir, stem);
  });
  const c = result.counts;
  const troubled = c.failed + c.unknown + c.pending > 0;
  life.log[troubled ? 'warn' : 'info'](
    `finished ${name}: rows ${c.rows}, accepted ${c.accepted}, invalid ${c.invalid}, duplicates ${c.duplicates}, failed ${c.failed}, unknown ${c.unknown},${c.cancelled > 0 ? ` cancelled ${c.cancelled},` : ''} requests ${c.requests}, ${fileTimeText(result)} -> done/${target}`,
    {
      event: 'file-finished',
      file: target,
      counts: c,
      elapsedMs: fileTimeMs(result),
      runMs: result.elapsedMs,
    },
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
 * The file's time from when it was first taken to its end, as the journal has it: a node that
 * finishes a file another run began (a restart, another node's batches) counts from then, not from
 * its own start.
 */
function fileTimeMs(result: FileRunResult): number {
  const file = result.file;
  if (!file) return result.elapsedMs;
  return Math.max(result.elapsedMs, sinceTakenMs(file, new Date().toISOString()));
}

/** "61.8 s", or "1 min 2 s since taken (this run 0.1 s)" when this run is not the whole of it. */
function fileTimeText(result: FileRunResult): string {
  const whole = fileTimeMs(result);
  const run = `${(result.elapsedMs / 1000).toFixed(1)} s`;
  // within a second: this run was the file's whole time
  if (whole - result.elapsedMs < 1000) return run;
  return `${formatDuration(whole / 1000)} since taken (this run ${run})`;
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
      writeWhole(note, `${what}\n`);
    } catch {
      // no room for the note: the log line said it
    }
  }, delay).unref();
}

async function fileDuplicate(life: FileLife, name: string, original: FileRecord): Promise<void> {
  const reads = life.ctx.reads; // set by openRuntime
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

const NOTHING_SENT = 'Nothing in it was sent. Fix the file and drop it into inbox/ again.';
// Failed, not left in processing/: a daemon restarted with other settings would otherwise retry it
// at every start, unseen.
const PROVIDER_CHANGED =
  'Nothing more of it was sent; the journal keeps what was. With the provider settings set back to the ones it was planned for, drop this same file into inbox/ again: it goes on where it stopped, and nothing is sent twice.';
export const SENT_SOME =
  'Some rows may have been sent before this happened; the journal remembers them. Once the cause is fixed, drop the same file into inbox/ again: only what was not sent yet is sent (if everything was, you get its results).';

/**
 * Files a file under failed/ with NAME.error.txt; if even that fails, leaves it where it is. Never
 * throws.
 */
export async function failFile(
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
        await writeResultCsv(life.ctx.reads, resultsOf, dir, stem, life.ctx.spools);
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
