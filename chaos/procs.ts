// The processes of a chaos run: the simulator (`smsdrop simulate --record FILE`, one process for
// the whole of a mode's run, so its memory of reqIds outlives every killed sender) and smsdrop
// itself (`node --import tsx src/cli.ts ...`), started, killed at a chosen moment, or run to the
// end. Every smsdrop process's output is appended to a log file of the run, for investigation.
import { type ChildProcess, spawn } from 'node:child_process';
import { appendFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';

export const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const CLI = path.join(REPO, 'src', 'cli.ts');

/** Credentials shared by the simulator and smsdrop (test values, not secrets). */
export const CREDENTIALS = {
  SMSDROP_ACCOUNT_SID: 'ACchaos0000000000000000000000001',
  SMSDROP_AUTH_TOKEN: 'chaostoken000000000000000000001',
};

/**
 * A deadline raced against a process's exit: unref'd, so one that lost the race (a 2-minute
 * timeout of a run that ended at once) does not keep a test's process alive after it is done.
 * The child process keeps the event loop alive while it runs.
 */
function timeout(ms: number): Promise<void> {
  return sleep(ms, undefined, { ref: false });
}

export interface Exit {
  code: number | null;
  signal: NodeJS.Signals | null;
}

export interface CliProcess {
  child: ChildProcess;
  exited: Promise<Exit>;
  alive(): boolean;
  output(): string;
}

/** The environment without whatever SMSDROP_* the person running the suite has set. */
export function cleanEnv(extra: Record<string, string>): NodeJS.ProcessEnv {
  const env = Object.fromEntries(
    Object.entries(process.env).filter(([k]) => !k.startsWith('SMSDROP_') && k !== 'NODE_OPTIONS'),
  );
  return { ...env, ...extra };
}

/** An empty config file, so a developer's config/local.json cannot change the run. */
export function writeEmptyConfig(dir: string): string {
  const file = path.join(dir, 'empty-config.json');
  writeFileSync(file, '{}');
  return file;
}

/**
 * `reportDir`: where Node writes a diagnostic report (with the JavaScript stack) when the process
 * gets SIGUSR2, which killAfter sends to a process that does not obey SIGTERM in time.
 */
export function startCli(args: string[], env: NodeJS.ProcessEnv, reportDir?: string): CliProcess {
  const report = reportDir
    ? ['--report-on-signal', '--report-signal=SIGUSR2', `--report-directory=${reportDir}`]
    : [];
  const child = spawn(process.execPath, [...report, '--import', 'tsx', CLI, ...args], {
    cwd: REPO,
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let text = '';
  let done = false;
  child.stdout.on('data', (d: Buffer) => (text += d.toString()));
  child.stderr.on('data', (d: Buffer) => (text += d.toString()));
  const exited = new Promise<Exit>((resolve) =>
    child.once('exit', (code, signal) => {
      done = true;
      resolve({ code, signal });
    }),
  );
  return { child, exited, alive: () => !done, output: () => text };
}

/** Appends a process's story to the run's log. */
export function logProcess(logFile: string, title: string, proc: CliProcess, exit: Exit): void {
  const how = exit.signal ? `killed by ${exit.signal}` : `exit ${exit.code}`;
  appendFileSync(
    logFile,
    `=== ${title}: ${how}\n${proc.output()}${proc.output().endsWith('\n') || proc.output() === '' ? '' : '\n'}`,
  );
}

/** How long a process stuck after SIGTERM gets to write its diagnostic report. */
const REPORT_WAIT_MS = 3_000;

export interface KillResult {
  /** The signal reached a live process. */
  delivered: boolean;
  exit: Exit;
  /** After SIGTERM it did not exit within stopTimeoutMs and was killed. */
  stuck: boolean;
}

/**
 * Sends `signal` after `delayMs` unless the process ended first; a SIGTERM that is not obeyed in
 * time is followed by SIGKILL.
 */
export async function killAfter(
  proc: CliProcess,
  delayMs: number,
  signal: NodeJS.Signals,
  stopTimeoutMs: number,
): Promise<KillResult> {
  const ended = await Promise.race([
    proc.exited.then(() => true),
    timeout(delayMs).then(() => false),
  ]);
  if (ended || !proc.alive()) return { delivered: false, exit: await proc.exited, stuck: false };
  proc.child.kill(signal);
  if (signal === 'SIGKILL') return { delivered: true, exit: await proc.exited, stuck: false };
  const obeyed = await Promise.race([
    proc.exited.then(() => true),
    timeout(stopTimeoutMs).then(() => false),
  ]);
  if (!obeyed) {
    // A diagnostic report first (when the process was started with a report folder), then the end.
    proc.child.kill('SIGUSR2');
    await Promise.race([proc.exited, timeout(REPORT_WAIT_MS)]);
    proc.child.kill('SIGKILL');
  }
  return { delivered: true, exit: await proc.exited, stuck: !obeyed };
}

/** Runs to the end, or SIGKILL after timeoutMs (then timedOut). */
export async function runToEnd(
  proc: CliProcess,
  timeoutMs: number,
): Promise<{ exit: Exit; timedOut: boolean }> {
  const ended = await Promise.race([
    proc.exited.then(() => true),
    timeout(timeoutMs).then(() => false),
  ]);
  if (!ended) proc.child.kill('SIGKILL');
  return { exit: await proc.exited, timedOut: !ended };
}

/** A field of a JSON summary as text: a string as it is, nothing as '', anything else as JSON. */
export function textOf(value: unknown): string {
  if (value === undefined) return '';
  return typeof value === 'string' ? value : JSON.stringify(value);
}

/** The last line of stdout that parses as a JSON object, if any. */
export function lastJson(text: string): Record<string, unknown> | undefined {
  const lines = text.trim().split('\n').reverse();
  for (const line of lines) {
    if (!line.startsWith('{')) continue;
    try {
      return JSON.parse(line) as Record<string, unknown>;
    } catch {
      // not the summary
    }
  }
  return undefined;
}

export interface SimulatorProcess {
  url: string;
  recordFile: string;
  /** SIGTERM; resolves with the simulator's own count of requests that reached it. */
  stop(): Promise<SimulatorCounts>;
}

export interface SimulatorCounts {
  requests: number;
  accepted: number;
  /** The most requests in flight at once. */
  peakInFlight: number;
  /** Those requests, as the simulator names them: "RECEIVED-AT REQID FAULT". */
  peakRequests: string[];
}

export interface SimulatorSettings {
  dir: string;
  appIds: string[];
  templates: string;
  faults: string;
  seed: number;
}

/**
 * How long the simulator holds a stalled request before its gateway answers 504: longer than the
 * nodes wait for an answer (SMSDROP_RESPONSE_TIMEOUT_MS, 1 s), so a node gives up on requests the
 * provider still counts, as a real provider's own server timeout is longer than a client's.
 */
export const PROVIDER_STALL_MS = 1_500;

export async function startSimulatorProcess(s: SimulatorSettings): Promise<SimulatorProcess> {
  const recordFile = path.join(s.dir, 'accepted.jsonl');
  const args = [
    'simulate',
    '--record',
    recordFile,
    '--templates',
    s.templates,
    '--seed',
    String(s.seed),
    ...(s.faults ? ['--faults', s.faults] : []),
    '--stall-ms',
    String(PROVIDER_STALL_MS),
  ];
  const proc = startCli(args, cleanEnv({ ...CREDENTIALS, SMSDROP_APP_ID: s.appIds.join(',') }));
  const deadline = Date.now() + 30_000;
  while (!/listening on (\S+)/.test(proc.output())) {
    if (!proc.alive() || Date.now() > deadline)
      throw new Error(`the simulator did not start:\n${proc.output()}`);
    await sleep(20);
  }
  const url = /listening on (\S+)/.exec(proc.output())![1]!;
  let stopping: Promise<SimulatorCounts> | undefined;
  const stop = async () => {
    proc.child.kill('SIGTERM');
    await proc.exited;
    const m = /stopping after (\d+) requests, (\d+) accepted, at most (\d+) at once/.exec(
      proc.output(),
    );
    if (!m)
      throw new Error(`the simulator did not say how many requests it had:\n${proc.output()}`);
    const peak = /in flight at the peak: (.*)/.exec(proc.output());
    return {
      requests: Number(m[1]),
      accepted: Number(m[2]),
      peakInFlight: Number(m[3]),
      peakRequests: peak ? peak[1]!.split('; ') : [],
    };
  };
  return { url, recordFile, stop: () => (stopping ??= stop()) };
}
