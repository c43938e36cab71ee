// What the two modes of a chaos run share: their settings, smsdrop's environment (every setting
// that could make a run slow set for speed), the kill plan, writing a round's files, and the last
// step of both modes: rows left `unknown` resent under their own reqId (`smsdrop retry --unknown`).
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { type JournalFile, journalFiles } from './check.js';
import { type ControlState, newControlState } from './control.js';
import { type ChaosFile, generateRound, type Scale } from './files.js';
import { type FaultCounts, noFaults } from './clusterFaults.js';
import { cleanEnv, CREDENTIALS, lastJson, logProcess, runToEnd, startCli } from './procs.js';

export type Mode = 'send' | 'daemon' | 'cluster';

export interface ModeSettings {
  mode: Mode;
  /** This mode's own folder: data directory, files, logs. */
  dir: string;
  kills: number;
  seed: number;
  scale: Scale;
  /** A kill lands uniformly in [min, max] ms after the process starts (start-up takes ~0.7 s). */
  killWindowMs: [number, number];
  /** Share of kills that are SIGTERM (the rest SIGKILL). */
  sigtermShare: number;
  appId: string;
  simulatorUrl: string;
  configFile: string;
  /** Longest a run without kills may take before it counts as stuck. */
  finishTimeoutMs: number;
  random: () => number;
  /** Pause, resume and cancel commands among the kills (chaos/control.ts). */
  control: boolean;
}

export interface ModeRun {
  /** Every distinct file generated and handed to smsdrop. */
  files: ChaosFile[];
  rounds: number;
  kills: { sigkill: number; sigterm: number };
  /** Processes started (killed or not). */
  starts: number;
  /** Daemon mode: copies dropped into inbox/ (a file dropped twice counts twice). */
  drops: number;
  /** Rows that `retry --unknown` resent. */
  unknownResent: number;
  /**
   * Rows that `retry --failed` resent (not sent: a transient code kept answering past the
   * attempts).
   */
  failedResent: number;
  /**
   * Things the processes did that they must not (exit 1, a SIGTERM not obeyed, a run that hung).
   */
  problems: string[];
  /** Worth knowing, not failures in themselves. */
  notes: string[];
  /** The control commands run, and when each cancel returned. */
  control: ControlState;
  /** Cluster mode: the nodes stopped and cut off (none in the other modes). */
  nodeFaults: FaultCounts;
}

/** How long a SIGTERM may take: the grace period (2 s) and a response timeout, with room. */
export const STOP_TIMEOUT_MS = 15_000;

export function dataDirOf(s: ModeSettings): string {
  return path.join(s.dir, 'data');
}

export function logFileOf(s: ModeSettings): string {
  return path.join(s.dir, 'processes.log');
}

/** Where a process stuck after SIGTERM writes its diagnostic report (node --report-on-signal). */
export function reportDirOf(s: ModeSettings): string {
  return path.join(s.dir, 'reports');
}

/** smsdrop's environment for a chaos run: small delays and timeouts everywhere. */
export function smsdropEnv(s: ModeSettings): NodeJS.ProcessEnv {
  return cleanEnv({
    ...CREDENTIALS,
    SMSDROP_APP_ID: s.appId,
    SMSDROP_BASE_URL: s.simulatorUrl,
    SMSDROP_DATA_DIR: dataDirOf(s),
    SMSDROP_CONFIG: s.configFile,
    SMSDROP_TEMPLATES_FILE: 'off', // a developer's config/templates.json would refuse its rows
    SMSDROP_LOG_LEVEL: 'info',
    SMSDROP_RETRY_BASE_MS: '5',
    SMSDROP_RETRY_MAX_MS: '50',
    // Three attempts, not six: with the faults on, a batch then ends `unknown` now and then, so
    // the run also proves the way back from it (retry --unknown under the batch's own reqId).
    SMSDROP_MAX_ATTEMPTS: '3',
    // A stalled request is in doubt after 1 s instead of 30.
    SMSDROP_RESPONSE_TIMEOUT_MS: '1000',
    SMSDROP_CONNECT_TIMEOUT_MS: '1000',
    SMSDROP_PAUSE_COOLDOWN_MS: '1000',
    SMSDROP_RATE_LIMIT_DELAY_MS: '100',
    SMSDROP_STABILITY_MS: '200',
    // Any free port: another run (or a daemon) on this machine may hold the default one.
    SMSDROP_HTTP: '127.0.0.1:0',
    // No rescan within a run: every file is found by its event, or the run fails (the rescan, a
    // safety net, would take a file whose event was missed some seconds later, and hide it).
    SMSDROP_INBOX_RESCAN_MS: '3600000',
    SMSDROP_GRACE_MS: '2000',
    SMSDROP_PROGRESS_INTERVAL_MS: '60000',
    // The defaults, written out: both matter to the verdict (a repeat in another file is sent
    // once; a file stopped part-way resumes since it moved less than 24 h ago).
    SMSDROP_REPEAT_WINDOW: '24h',
    SMSDROP_RESUME_WITHIN: '24h',
  });
}

export function planKill(s: ModeSettings): { delayMs: number; signal: NodeJS.Signals } {
  const [min, max] = s.killWindowMs;
  const delayMs = Math.round(min + s.random() * (max - min));
  return { delayMs, signal: s.random() < s.sigtermShare ? 'SIGTERM' : 'SIGKILL' };
}

export function newRun(): ModeRun {
  return {
    files: [],
    rounds: 0,
    kills: { sigkill: 0, sigterm: 0 },
    starts: 0,
    drops: 0,
    unknownResent: 0,
    failedResent: 0,
    problems: [],
    notes: [],
    control: newControlState(),
    nodeFaults: noFaults(),
  };
}

/** Generates round `run.rounds` into `folder` and adds its files to the run. */
export function addRound(s: ModeSettings, run: ModeRun, folder: string): ChaosFile[] {
  const files = generateRound({
    seed: s.seed,
    round: run.rounds,
    scale: s.scale,
    appId: s.appId,
    tag: s.mode,
  });
  mkdirSync(folder, { recursive: true });
  for (const f of files) writeFileSync(path.join(folder, f.name), f.bytes);
  run.rounds++;
  run.files.push(...files);
  return files;
}

export function countKill(run: ModeRun, signal: NodeJS.Signals): void {
  if (signal === 'SIGTERM') run.kills.sigterm++;
  else run.kills.sigkill++;
}

/** The last line of a process's output, for a problem's description. */
export function lastLine(text: string): string {
  return text.trim().split('\n').pop()?.slice(0, 300) ?? '';
}

const RETRY_PASSES = 3;

/** Where the retries read the files' states, and the environment they run in. */
export interface LeftoverJournal {
  env: NodeJS.ProcessEnv;
  files(): Promise<JournalFile[]>;
}

/**
 * What a person does with the rows a run left unsettled, file by file: `smsdrop retry ID --unknown`
 * (no --yes: on the day they were first sent every one goes under its own reqId, which the
 * provider refuses to send twice), and `smsdrop retry ID --failed` (failed means not sent: with
 * three attempts, a transient code now and then answers all of a batch's). Bounded: a file still
 * unsettled after RETRY_PASSES is left for the verdict to report.
 */
export async function retryLeftovers(
  s: ModeSettings,
  run: ModeRun,
  journal: LeftoverJournal = {
    env: smsdropEnv(s),
    files: () => Promise.resolve(journalFiles(dataDirOf(s))),
  },
): Promise<void> {
  for (let pass = 1; pass <= RETRY_PASSES; pass++) {
    // A cancelled file is over: its rows unknown or failed stay so (no request after a cancel).
    const open = (await journal.files()).filter((f) => f.control !== 'cancelled');
    const left = open.flatMap((f: JournalFile) =>
      (['unknown', 'failed'] as const)
        .filter((status) => f[status] > 0)
        .map((status) => ({ f, status, rows: f[status] })),
    );
    if (left.length === 0) return;
    for (const { f, status, rows } of left) await retryOne(s, run, journal.env, f, status, rows);
  }
}

async function retryOne(
  s: ModeSettings,
  run: ModeRun,
  env: NodeJS.ProcessEnv,
  f: JournalFile,
  status: 'unknown' | 'failed',
  rows: number,
): Promise<void> {
  const what = `retry ${f.id} --${status} (${f.name}, ${rows} ${status})`;
  const proc = startCli(['retry', String(f.id), `--${status}`, '--json'], env);
  run.starts++;
  const { exit, timedOut } = await runToEnd(proc, s.finishTimeoutMs);
  logProcess(logFileOf(s), what, proc, exit);
  const retried = lastJson(proc.output())?.retried as { accepted?: number } | undefined;
  if (status === 'unknown') run.unknownResent += rows;
  else run.failedResent += rows;
  if (timedOut) run.problems.push(`${what} did not finish within ${s.finishTimeoutMs} ms`);
  else if (exit.code === 1 || exit.code === 2)
    run.problems.push(`${what} exited ${exit.code}: ${lastLine(proc.output())}`);
  else run.notes.push(`${what}: resent, ${retried?.accepted ?? '?'} accepted, exit ${exit.code}`);
}
