// Daemon mode: `smsdrop run` on one data directory, killed at a random moment and started again,
// N times. Each life may drop the next files of the schedule into inbox/ at a random moment
// before its kill (a round: two files at once, then one per life, and one file dropped a second
// time, same bytes, once the first copy was taken); a new round comes once every dropped file is
// filed. Then the daemon runs without kills until inbox/ and processing/ are empty, is stopped,
// and the rows left unknown are resent (retry --unknown).
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
 * A round's drops: two files at once, then one a life (the big group last), then the second file
 * again.
 */
function scheduleOf(files: ChaosFile[]): ChaosFile[][] {
  const [a, b, c, d, e] = files as [ChaosFile, ChaosFile, ChaosFile, ChaosFile, ChaosFile];
  return [[a, b], [c], [d], [e], [b]];
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

export async function runDaemonMode(s: ModeSettings): Promise<ModeRun> {
  const run = newRun();
  const schedule: ChaosFile[][] = [];
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
async function oneLife(s: ModeSettings, run: ModeRun, schedule: ChaosFile[][]): Promise<void> {
  const { delayMs, signal } = planKill(s);
  const proc = startCli(['run'], smsdropEnv(s), reportDirOf(s));
  run.starts++;
  const next = schedule[0];
  const dropping = next
    ? sleep(Math.floor(s.random() * delayMs)).then(() => drop(s, run, next) && schedule.shift())
    : Promise.resolve();
  const result = await killAfter(proc, delayMs, signal, STOP_TIMEOUT_MS);
  await dropping;
  const title = `run${next ? ` (dropping ${next.map((f) => f.name).join(', ')})` : ''}${result.delivered ? ` (${signal} after ${delayMs} ms)` : ''}`;
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
async function runUntilFiled(
  s: ModeSettings,
  run: ModeRun,
  schedule: ChaosFile[][],
): Promise<void> {
  const proc = startCli(['run'], smsdropEnv(s), reportDirOf(s));
  run.starts++;
  const deadline = Date.now() + s.finishTimeoutMs;
  let settled = false;
  while (proc.alive() && Date.now() < deadline) {
    if (schedule.length > 0 && drop(s, run, schedule[0]!)) schedule.shift();
    if (schedule.length === 0 && allFiled(s)) {
      settled = true;
      break;
    }
    await sleep(100);
  }
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
