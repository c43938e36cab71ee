// Send mode: `smsdrop send FILE` started again and again on the files in turn, each run killed at a
// random moment (SIGKILL mostly, SIGTERM now and then), until N kills have landed. A file that a
// run finished leaves the turn; when every file of the round has, a new round is generated, so
// the kills keep landing on work to do. Then every file is sent to the end without kills, and the
// rows left unknown are resent (retry --unknown).
import path from 'node:path';
import type { ChaosFile } from './files.js';
import {
  addRound,
  countKill,
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
import { killAfter, lastJson, logProcess, runToEnd, startCli, textOf } from './procs.js';

/** `send --json` statuses after which running the file again sends nothing more. */
const FINISHED = new Set(['done', 'already-sent']);
/** Uninterrupted runs of one file before giving up on it (a pause for failures ends a run). */
const FINISH_TRIES = 3;

export async function runSendMode(s: ModeSettings): Promise<ModeRun> {
  const run = newRun();
  const folder = path.join(s.dir, 'files');
  let turn: ChaosFile[] = [];
  // Bounded: processes that end before their kill do not count, but cannot go on for ever.
  for (
    let started = 0;
    run.kills.sigkill + run.kills.sigterm < s.kills && started < s.kills * 10;
    started++
  ) {
    if (turn.length === 0) turn = [...addRound(s, run, folder)];
    const file = turn.shift()!;
    const finished = await sendAndKill(s, run, path.join(folder, file.name));
    if (!finished) turn.push(file);
  }
  for (const file of run.files) await sendToTheEnd(s, run, path.join(folder, file.name));
  await retryLeftovers(s, run);
  return run;
}

/**
 * One `send` killed at a random moment; true when it ended by itself with the file finished (or
 * refused).
 */
async function sendAndKill(s: ModeSettings, run: ModeRun, file: string): Promise<boolean> {
  const { delayMs, signal } = planKill(s);
  const proc = startCli(['send', file, '--json'], smsdropEnv(s), reportDirOf(s));
  run.starts++;
  const result = await killAfter(proc, delayMs, signal, STOP_TIMEOUT_MS);
  const title = `send ${path.basename(file)}${result.delivered ? ` (${signal} after ${delayMs} ms)` : ''}`;
  logProcess(logFileOf(s), title, proc, result.exit);
  if (result.delivered) {
    countKill(run, signal);
    if (result.stuck)
      run.problems.push(
        `${title}: still running ${STOP_TIMEOUT_MS} ms after SIGTERM (diagnostic report, if any, in ${reportDirOf(s)})`,
      );
    return false;
  }
  if (result.exit.code === 1) run.problems.push(`${title}: exited 1: ${lastLine(proc.output())}`);
  const summary = lastJson(proc.output());
  const status = textOf(summary?.status);
  if (status === 'refused')
    run.notes.push(`${title}: refused: ${textOf(summary?.reason) || lastLine(proc.output())}`);
  return FINISHED.has(status) || status === 'refused';
}

/** `send FILE` without kills until it says the file is finished (a few tries at most). */
async function sendToTheEnd(s: ModeSettings, run: ModeRun, file: string): Promise<void> {
  let last = '';
  for (let i = 0; i < FINISH_TRIES; i++) {
    const proc = startCli(['send', file, '--json'], smsdropEnv(s));
    run.starts++;
    const { exit, timedOut } = await runToEnd(proc, s.finishTimeoutMs);
    const title = `send ${path.basename(file)} (to the end)`;
    logProcess(logFileOf(s), title, proc, exit);
    const summary = lastJson(proc.output());
    const status = textOf(summary?.status);
    if (timedOut) {
      run.problems.push(`${title}: did not finish within ${s.finishTimeoutMs} ms`);
      return;
    }
    if (exit.code === 1) run.problems.push(`${title}: exited 1: ${lastLine(proc.output())}`);
    if (FINISHED.has(status)) return;
    last =
      status === 'refused'
        ? `refused: ${textOf(summary?.reason)}`
        : `status ${status || '?'}: ${lastLine(proc.output())}`;
  }
  run.problems.push(
    `send ${path.basename(file)}: not finished after ${FINISH_TRIES} runs without kills (${last})`,
  );
}
