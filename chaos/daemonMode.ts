// Daemon mode: `smsdrop run` on one data directory, killed at a random moment and started again,
// N times. Each life may drop the next files of the schedule into inbox/ at a random moment
// before its kill (a round: two files at once, then one per life, and one file dropped a second
// time, same bytes, once the first copy was taken); a new round comes once every dropped file is
// filed. Some copies are dropped at the moment of a take: the instant the copy of the same name
// waiting in inbox/ leaves it (the daemon once missed those). Then the daemon runs without kills
// until inbox/ and processing/ are empty, is stopped, and the rows left unknown are resent (retry
// --unknown).
import {
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  renameSync,
  writeFileSync,
} from 'node:fs';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { journalFiles } from './check.js';
import { controlDuringLife, controlWhileFinishing, resumePaused } from './control.js';
import type { ChaosFile } from './files.js';
import {
  addRound,
  countKill,
  dataDirOf,
  lastLine,
  logFileOf,
  type ModeRun,
  type ModeSettings,
  newRun,
  planKill,
  reportDirOf,
  retryLeftovers,
  smsdropEnv,
  STOP_TIMEOUT_MS,
} from './mode.js';
import { type CliProcess, killAfter, logProcess, startCli } from './procs.js';

const FINISH_PASSES = 2;

/**
 * The folder's files that are input CSVs (not result, rejected or note files, not hidden or .part).
 */
export function inputCsvs(folder: string): string[] {
  if (!existsSync(folder)) return [];
  return readdirSync(folder).filter(
    (n) => /\.csv$/i.test(n) && !/\.(result|rejected)\.csv$/i.test(n) && !n.startsWith('.'),
  );
}

function folder(s: ModeSettings, name: 'inbox' | 'processing' | 'done' | 'failed'): string {
  return path.join(dataDirOf(s), name);
}

/** Every copy dropped has left inbox/ and processing/. */
function allFiled(s: ModeSettings): boolean {
  return (
    inputCsvs(folder(s, 'inbox')).length === 0 && inputCsvs(folder(s, 'processing')).length === 0
  );
}

/**
 * Files dropped together. `atTake`: dropped the moment the copy of the same name waiting in inbox/
 * is taken (at once when none waits).
 */
interface Drop {
  files: ChaosFile[];
  atTake?: true;
}

/**
 * A round's drops: two files at once, the second again at the moment it is taken, then one a life
 * (the big group last; the fourth again at its take), then the second file again.
 */
function scheduleOf(files: ChaosFile[]): Drop[] {
  const [a, b, c, d, e] = files as [ChaosFile, ChaosFile, ChaosFile, ChaosFile, ChaosFile];
  return [
    { files: [a, b] },
    { files: [b], atTake: true },
    { files: [c] },
    { files: [d] },
    { files: [d], atTake: true },
    { files: [e] },
    { files: [b] },
  ];
}

/**
 * Drops the files into inbox/ (written as NAME.part, then renamed: atomic); false, and nothing
 * dropped, while a copy of the same name still waits there to be taken.
 */
function drop(s: ModeSettings, run: ModeRun, files: ChaosFile[]): boolean {
  const inbox = folder(s, 'inbox');
  if (files.some((f) => existsSync(path.join(inbox, f.name)))) return false;
  for (const f of files) {
    writeFileSync(path.join(inbox, `${f.name}.part`), f.bytes);
    renameSync(path.join(inbox, `${f.name}.part`), path.join(inbox, f.name));
    run.drops++;
  }
  return true;
}

/**
 * Drops `d` the moment no copy of its names waits in inbox/ any more (polled every millisecond);
 * false, and nothing dropped, once `waitOn` says no take will come (the daemon is gone).
 */
async function dropAtTake(
  s: ModeSettings,
  run: ModeRun,
  d: Drop,
  waitOn: () => boolean,
): Promise<boolean> {
  const inbox = folder(s, 'inbox');
  const waiting = () => d.files.some((f) => existsSync(path.join(inbox, f.name)));
  const atATake = waiting();
  while (waiting()) {
    if (!waitOn()) return false;
    await sleep(1);
  }
  const taken = Date.now();
  if (!drop(s, run, d.files)) return false;
  const names = d.files.map((f) => f.name).join(', ');
  run.notes.push(
    atATake
      ? `${names} dropped again ${Date.now() - taken} ms after its copy was taken`
      : `${names} dropped again (its copy was taken already)`,
  );
  return true;
}

/**
 * The next drops of the schedule in one life: the first at a random moment (at once when it waits
 * for a take), then those that wait for its take; each leaves the schedule once dropped.
 */
async function dropDuringLife(
  s: ModeSettings,
  run: ModeRun,
  schedule: Drop[],
  delayMs: number,
  alive: () => boolean,
): Promise<void> {
  const next = schedule[0];
  if (!next) return;
  if (next.atTake) {
    if (await dropAtTake(s, run, next, alive)) schedule.shift();
    return;
  }
  await sleep(Math.floor(s.random() * delayMs));
  if (!drop(s, run, next.files)) return;
  schedule.shift();
  while (schedule[0]?.atTake && (await dropAtTake(s, run, schedule[0], alive))) schedule.shift();
}

export async function runDaemonMode(s: ModeSettings): Promise<ModeRun> {
  const run = newRun();
  const schedule: Drop[] = [];
  mkdirSync(folder(s, 'inbox'), { recursive: true });
  for (
    let started = 0;
    run.kills.sigkill + run.kills.sigterm < s.kills && started < s.kills * 3;
    started++
  ) {
    if (schedule.length === 0 && allFiled(s))
      schedule.push(...scheduleOf(addRound(s, run, path.join(s.dir, 'files'))));
    await oneLife(s, run, schedule);
  }
  for (let pass = 0; pass < FINISH_PASSES; pass++) {
    if (s.control)
      await resumePaused(s, run, run.control, smsdropEnv(s), journalFiles(dataDirOf(s)));
    await runUntilFiled(s, run, schedule);
    await retryLeftovers(s, run);
    const open = journalFiles(dataDirOf(s)).filter(
      (f) => f.pending > 0 || f.unknown > 0 || f.status !== 'done',
    );
    if (open.length === 0 || open.every((f) => f.status === 'refused')) break;
  }
  return run;
}

/** One daemon life: started, maybe given the next drop at a random moment, killed. */
async function oneLife(s: ModeSettings, run: ModeRun, schedule: Drop[]): Promise<void> {
  const { delayMs, signal } = planKill(s);
  const proc = startCli(['run'], smsdropEnv(s), reportDirOf(s));
  run.starts++;
  const next = schedule[0];
  const dropping = dropDuringLife(s, run, schedule, delayMs, () => proc.alive());
  const controlling = s.control
    ? controlDuringLife(s, run, smsdropEnv(s), delayMs, () =>
        Promise.resolve(journalFiles(dataDirOf(s))),
      )
    : undefined;
  const result = await killAfter(proc, delayMs, signal, STOP_TIMEOUT_MS);
  await dropping;
  await controlling; // a foreground resume (the daemon gone) holds the lock until it is done
  const title = `run${next ? ` (dropping ${next.files.map((f) => f.name).join(', ')}${next.atTake ? ' at its take' : ''})` : ''}${result.delivered ? ` (${signal} after ${delayMs} ms)` : ''}`;
  logProcess(logFileOf(s), title, proc, result.exit);
  if (result.delivered) {
    countKill(run, signal);
    if (result.stuck)
      run.problems.push(
        `${title}: still running ${STOP_TIMEOUT_MS} ms after SIGTERM (diagnostic report, if any, in ${reportDirOf(s)})`,
      );
    return;
  }
  run.problems.push(
    `${title}: the daemon exited by itself (${result.exit.code ?? result.exit.signal}): ${lastLine(proc.output())}`,
  );
}

/**
 * The daemon without kills: the rest of the schedule dropped, then stopped once everything is
 * filed.
 */
async function runUntilFiled(s: ModeSettings, run: ModeRun, schedule: Drop[]): Promise<void> {
  const proc = startCli(['run'], smsdropEnv(s), reportDirOf(s));
  run.starts++;
  const deadline = Date.now() + s.finishTimeoutMs;
  const waitOn = () => proc.alive() && Date.now() < deadline;
  let settled = false;
  let controlled = !s.control;
  const controlling = s.control
    ? controlWhileFinishing(
        s,
        run,
        smsdropEnv(s),
        () => Promise.resolve(journalFiles(dataDirOf(s))),
        () => !waitOn() || (schedule.length === 0 && allFiled(s)),
      ).finally(() => (controlled = true))
    : undefined;
  while (proc.alive() && Date.now() < deadline) {
    const next = schedule[0];
    if (next && (next.atTake ? await dropAtTake(s, run, next, waitOn) : drop(s, run, next.files)))
      schedule.shift();
    if (schedule.length === 0 && allFiled(s) && controlled) {
      settled = true;
      break;
    }
    await sleep(100);
  }
  await controlling;
  await stop(s, run, proc, settled);
}

async function stop(
  s: ModeSettings,
  run: ModeRun,
  proc: CliProcess,
  settled: boolean,
): Promise<void> {
  const title = 'run (to the end)';
  if (!proc.alive())
    run.problems.push(`${title}: the daemon exited by itself: ${lastLine(proc.output())}`);
  else if (!settled)
    run.problems.push(
      `${title}: files still in inbox/ or processing/ after ${s.finishTimeoutMs} ms: ${[...inputCsvs(folder(s, 'inbox')), ...inputCsvs(folder(s, 'processing'))].join(', ')}`,
    );
  const result = await killAfter(proc, 0, 'SIGTERM', STOP_TIMEOUT_MS);
  if (result.stuck)
    run.problems.push(
      `${title}: still running ${STOP_TIMEOUT_MS} ms after SIGTERM (diagnostic report, if any, in ${reportDirOf(s)})`,
    );
  logProcess(logFileOf(s), title, proc, result.exit);
}

/** What is wrong with the folders at the end: copies not in done/, notes of failed/. */
export function checkFolders(s: ModeSettings, drops: number): string[] {
  const problems: string[] = [];
  const done = inputCsvs(folder(s, 'done'));
  const failed = inputCsvs(folder(s, 'failed'));
  for (const name of failed)
    problems.push(
      `failed/${name}: ${readNote(folder(s, 'failed'), name).replace(/\s+/g, ' ').trim().slice(0, 300)}`,
    );
  for (const where of ['inbox', 'processing'] as const)
    for (const name of inputCsvs(folder(s, where))) problems.push(`${where}/${name}: still there`);
  if (done.length !== drops)
    problems.push(`done/ holds ${done.length} input files, ${drops} copies were dropped`);
  return problems;
}

function readNote(dir: string, csvName: string): string {
  const note = path.join(dir, csvName.replace(/\.csv$/i, '.error.txt'));
  try {
    return existsSync(note) ? readFileSync(note, 'utf8') : '(no note)';
  } catch {
    return '(note unreadable)';
  }
}
