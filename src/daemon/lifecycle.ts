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
//   not a list    failed/NAME + NAME.error.txt, straight from inbox/
//   paused        stays in processing/, runs again after the account cooldown
//   stopped       stays in processing/, resumes at the next start
//   any error     failed/NAME.csv + NAME.error.txt (a full disk fails the file, not the daemon)
import { existsSync } from 'node:fs';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { tightenTaken } from '../datadir/permissions.js';
import { EXCEL_ADVICE } from '../intake/index.js';
import { type FileInspection, inspectFile } from '../intake/inspect.js';
import { describeError } from '../log/redact.js';
import { processFile } from '../pipeline/index.js';
import { errorCode, hasCode, isDatabaseOutage, userError } from '../errors.js';
import { isListName, stemOf } from '../datadir/names.js';
import { errorNote, type FileLife, noteEvent } from './fileLife.js';
import { moveUnique, writeWhole } from './folders.js';
import { lateResume } from './late.js';
import type { JobResult } from './pool.js';
import { ELSEWHERE_WAIT_MS, failFile, SENT_SOME, settle } from './publish.js';

/**
 * Moves a stable inbox file into processing/; returns its name there, or undefined if it went
 * elsewhere.
 */
export function takeFile(life: FileLife, inboxFile: string): string | undefined {
  const { folders, log } = life;
  const dropped = path.basename(inboxFile);
  try {
    if (!isListName(dropped)) {
      const name = moveUnique(inboxFile, folders.failed, dropped, [
        folders.processing,
        folders.done,
      ]);
      tightenTaken(path.join(folders.failed, name), life.ctx.config.shareWithGroup);
      const { code, reason, advice } = notCsvNote(dropped);
      writeWhole(
        path.join(folders.failed, `${stemOf(name)}.error.txt`),
        errorNote(dropped, `${code}: ${reason}`, advice),
      );
      log.warn(`failed ${dropped}: ${code}: ${reason}; moved to failed/${name}`, {
        event: 'file-failed',
        file: name,
        dropped,
        code,
      });
      void noteEvent(life, 'file.failed', { name, status: 'failed' }, `${code}: ${reason}`);
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
 * Why a file without a list's ending (.csv, .tsv, .txt) is not sent, and what to do: a workbook is
 * saved as CSV, anything else renamed.
 */
function notCsvNote(name: string): { code: string; reason: string; advice: string } {
  if (EXCEL_NAME.test(name))
    return { code: 'E_FILE_EXCEL', reason: EXCEL_ADVICE, advice: 'Nothing in it was sent.' };
  return {
    code: 'E_FILE_NOT_CSV',
    reason: 'not a .csv, .tsv or .txt file; only such files are sent',
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
  const release = holdBytes(life, name, sha256);
  try {
    return await runFile(life, name, inspection);
  } catch (err) {
    if (isDatabaseOutage(err)) return waitForDatabase(life, name, err);
    if (hasCode(err, 'E_FILE_CLAIM_LOST')) return readElsewhere(life, name, err);
    await fileFailed(life, name, sha256, err);
    return undefined;
  } finally {
    release();
  }
}

/** Marks the bytes as running (same bytes never run twice at once); returns the release. */
function holdBytes(life: FileLife, name: string, sha256: string | undefined): () => void {
  if (!sha256) return () => {};
  let release = () => {};
  life.busy.set(sha256, new Promise<void>((resolve) => (release = resolve)));
  life.active.set(name, sha256);
  return () => {
    life.busy.delete(sha256);
    life.active.delete(name);
    release();
  };
}

async function runFile(
  life: FileLife,
  name: string,
  inspection: FileInspection | undefined,
): Promise<JobResult> {
  const sha256 = inspection?.sha256;
  // Only once it runs: a file that waited for another with the same bytes is still fresh.
  const fresh = life.fresh.delete(name);
  if (fresh && sha256) await life.files.noteTaken(sha256);
  const late = fresh || !sha256 ? undefined : await lateResume(life, sha256);
  if (late) {
    await failFile(
      life,
      name,
      'E_RESUME_LATE',
      late.reason,
      late.advice,
      late.requested ? late.fileId : undefined,
    );
    await noteEvent(life, 'file.late', late.fileId, late.reason);
    return undefined;
  }
  const file = path.join(life.folders.processing, name);
  const result = await processFile(life.ctx, file, {
    name,
    hold: life.ctx.config.approval,
    ...(inspection ? { inspection } : {}),
  });
  return await settle(life, name, result);
}

/** How long a file stopped by the journal's database going waits before it goes on. */
const DATABASE_WAIT_MS = 5_000;

/** The journal's database is gone for now (a restart): the file waits in processing/ for it. */
function waitForDatabase(life: FileLife, name: string, err: unknown): JobResult {
  life.log.warn(
    `${name}: the journal's database did not answer (${describeError(err)}); the file waits in processing/ and goes on in ${DATABASE_WAIT_MS / 1000} s`,
    { event: 'file-waiting-for-database', file: name },
  );
  return { again: sleep(DATABASE_WAIT_MS, undefined, { ref: false }) };
}

/**
 * This node's claim on the file passed while it read it, and another node may read it now: as
 * the 'elsewhere' outcome, the copy waits in processing/ and is looked at again.
 */
function readElsewhere(life: FileLife, name: string, err: unknown): JobResult {
  life.log.warn(
    `${name}: ${describeError(err)}; this copy waits in processing/ and is looked at again in ${ELSEWHERE_WAIT_MS / 1000} s`,
    { event: 'file-elsewhere', file: name },
  );
  return { again: sleep(ELSEWHERE_WAIT_MS, undefined, { ref: false }) };
}

/** A run that threw: filed under failed/, unless the journal failed (then it resumes later). */
async function fileFailed(
  life: FileLife,
  name: string,
  sha256: string | undefined,
  err: unknown,
): Promise<void> {
  if (errorCode(err) === 'E_JOURNAL_LOST') {
    // Not the file's fault: it stays in processing/, and the next start settles and resumes it.
    life.log.warn(`${name}: stopped by a journal failure; it resumes at the next start`, {
      event: 'file-stopped',
      file: name,
    });
    return;
  }
  // One of smsdrop's errors (a full disk) keeps its code; anything else is a bug, said as such.
  const known = userError(err);
  const reason = known?.message ?? describeError(err);
  await failFile(life, name, known?.code ?? 'E_UNEXPECTED', reason, SENT_SOME);
  await noteEvent(
    life,
    'file.failed',
    async () =>
      (sha256 ? (await life.files.identify(sha256))?.id : undefined) ?? {
        name,
        status: 'failed',
      },
    reason,
  );
}
