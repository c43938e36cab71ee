// The programs the benchmark runs as separate processes, as a user would: the simulator, and
// `smsdrop send` with its peak memory watched from outside (VmHWM in /proc, sampled every 50 ms:
// the kernel's high-water mark, so a sample missed between two reads loses nothing but the last
// 50 ms), and `smsdrop report` when that command exists.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { Credentials } from './baselines.js';

const ROOT = path.resolve(import.meta.dirname, '..');
const RSS_SAMPLE_MS = 50;
/** /proc counts CPU time in clock ticks: 100 per second on Linux (USER_HZ). */
const CLOCK_TICKS = 100;

/** Children still running: killed if the benchmark exits early, so no simulator outlives it. */
const live = new Set<ChildProcess>();
process.once('exit', () => {
  for (const child of live) child.kill('SIGKILL');
});

/**
 * Kills the child if the benchmark exits first (an error, Ctrl-C): nothing is left running or
 * sending.
 */
export function track(child: ChildProcess): ChildProcess {
  live.add(child);
  child.once('exit', () => live.delete(child));
  return child;
}

const SETPRIV = '/usr/bin/setpriv';

/**
 * Node with these arguments, as a tracked child that also dies if the benchmark is killed with
 * SIGKILL: under setpriv (util-linux, which execs it) with a parent-death signal where setpriv
 * exists, as test/pg/cluster.ts starts PostgreSQL. The child's pid is node's own.
 */
export function spawnNode(
  args: string[],
  options: { env: NodeJS.ProcessEnv; stdio: ['ignore', 'pipe', 'pipe'] },
): ChildProcess {
  return spawnTracked([process.execPath, ...args], options);
}

/** A command (its program first) started as spawnNode starts Node. */
function spawnTracked(
  command: string[],
  options: { env: NodeJS.ProcessEnv; stdio: ['ignore', 'pipe', 'pipe'] },
): ChildProcess {
  return track(
    existsSync(SETPRIV)
      ? spawn(SETPRIV, ['--pdeathsig=SIGKILL', ...command], options)
      : spawn(command[0]!, command.slice(1), options),
  );
}

/**
 * How `send` is started: `node` runs dist/cli.js (or the source) with no settings of its own; `bin`
 * runs bin/smsdrop, as the README starts it: the `node` on PATH with bin/node-flags and
 * MALLOC_ARENA_MAX=1. bin/smsdrop execs node, so the child's pid is node's either way.
 */
export type SendStart = 'node' | 'bin';

function sendCommand(start: SendStart, source: CliSource, args: string[], nodeArgs: string[]) {
  if (start === 'node') return [process.execPath, ...nodeArgs, ...cliArgs(source), ...args];
  if (nodeArgs.length > 0) throw new Error('bin/smsdrop takes no extra Node arguments here');
  return ['/bin/sh', path.join(ROOT, 'bin/smsdrop'), ...args];
}

/** How to start the CLI: built (dist/cli.js, realistic) or from source through tsx (no build). */
export type CliSource = 'dist' | 'src';

export function cliArgs(source: CliSource): string[] {
  return source === 'dist'
    ? [path.join(ROOT, 'dist/cli.js')]
    : ['--import', 'tsx', path.join(ROOT, 'src/cli.ts')];
}

/** `npm run build`; false (with tsc's output) when it failed, e.g. on someone's unfinished file. */
export function build(): { ok: boolean; output: string } {
  const r = spawnSync('npm', ['run', 'build', '--silent'], { cwd: ROOT, encoding: 'utf8' });
  return { ok: r.status === 0, output: `${r.stdout ?? ''}${r.stderr ?? ''}`.trim() };
}

/**
 * The children's environment: no SMSDROP_* of the developer, an empty config file, these values.
 */
export function childEnv(
  workDir: string,
  creds: Credentials,
  extra: Record<string, string>,
): NodeJS.ProcessEnv {
  const configFile = path.join(workDir, 'config.json');
  writeFileSync(configFile, '{}');
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) if (!k.startsWith('SMSDROP_')) env[k] = v;
  return {
    ...env,
    SMSDROP_CONFIG: configFile,
    SMSDROP_TEMPLATES_FILE: 'off', // a developer's config/templates.json would refuse its rows
    SMSDROP_ACCOUNT_SID: creds.accountSid,
    SMSDROP_AUTH_TOKEN: creds.authToken,
    SMSDROP_APP_ID: creds.appId,
    ...extra,
  };
}

export interface SimulatorProcess {
  url: string;
  pid: number;
  /** SIGTERM; resolves with the simulator's own counts, when it said them. */
  stop(): Promise<SimulatorCounts | undefined>;
}

/** What the simulator says as it stops: requests that reached it, and the most at once. */
export interface SimulatorCounts {
  requests: number;
  accepted: number;
  peakInFlight: number;
}

function countsIn(text: string): SimulatorCounts | undefined {
  const m = /stopping after (\d+) requests, (\d+) accepted, at most (\d+) at once/.exec(text);
  return m
    ? { requests: Number(m[1]), accepted: Number(m[2]), peakInFlight: Number(m[3]) }
    : undefined;
}

export function exited(child: ChildProcess): Promise<number | null> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve(child.exitCode);
  return new Promise((resolve) => child.once('exit', (code) => resolve(code)));
}

/** `smsdrop simulate` on a free port; resolves once it printed `listening on <url>`. */
export function startSimulatorProcess(
  source: CliSource,
  env: NodeJS.ProcessEnv,
  latencyMs: number,
  templates: string,
): Promise<SimulatorProcess> {
  const args = [
    ...cliArgs(source),
    'simulate',
    '--port',
    '0',
    '--latency-ms',
    String(latencyMs),
    '--templates',
    templates,
    '--seed',
    '1',
  ];
  const child = spawnNode(args, { env, stdio: ['ignore', 'pipe', 'pipe'] });
  // Its output read to the end (the counts are its last line), not only its exit.
  const closed = new Promise<void>((resolve) => child.once('close', () => resolve()));
  return new Promise((resolve, reject) => {
    let out = '';
    let err = '';
    child.stderr!.on('data', (d) => (err += d));
    child.stdout!.on('data', (d) => {
      out += d;
      const m = /^listening on (\S+)$/m.exec(out);
      if (m) {
        child.stdout!.removeAllListeners('data');
        out = '';
        child.stdout!.on('data', (d) => (out = (out + d).slice(-4000)));
        resolve({
          url: m[1]!,
          pid: child.pid!,
          stop: async () => {
            child.kill('SIGTERM');
            await closed;
            return countsIn(out);
          },
        });
      }
    });
    child.once('exit', (code) =>
      reject(new Error(`simulator exited (${code}) before listening: ${err.trim()}`)),
    );
  });
}

/**
 * CPU time (user + system) the calling thread has used so far, in seconds (Node 20 has no
 * process.threadCpuUsage).
 */
export function threadCpuSeconds(): number {
  return cpuSecondsOf('thread-self') ?? 0;
}

/**
 * /proc/PID/stat's fields after the command name (which may hold spaces): the state is the 1st,
 * the parent's pid the 2nd, utime and stime the 12th and 13th, cutime and cstime the 14th and 15th.
 * Throws once the process is gone.
 */
function statFields(pid: number | string): string[] {
  return readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
}

/**
 * CPU time (user + system) a process has used so far, in seconds, from /proc; undefined once it is
 * gone.
 */
export function cpuSecondsOf(pid: number | 'thread-self'): number | undefined {
  try {
    const fields = statFields(pid);
    return (Number(fields[11]) + Number(fields[12])) / CLOCK_TICKS;
  } catch {
    return undefined;
  }
}

/**
 * CPU time (user + system) a server has used so far, in seconds: its main process, its children
 * that ended (their times are added to the parent's when it reaps them: cutime, cstime) and those
 * running. PostgreSQL's postmaster reaps every backend, so this holds the work of connections that
 * came and went.
 */
export function serverCpuSecondsOf(pid: number): number {
  const main = statFields(pid);
  let ticks = [11, 12, 13, 14].reduce((sum, i) => sum + Number(main[i]), 0);
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const fields = statFields(name);
      if (Number(fields[1]) === pid) ticks += Number(fields[11]) + Number(fields[12]);
    } catch {
      // ended meanwhile: counted by its parent's cutime from now on
    }
  }
  return ticks / CLOCK_TICKS;
}

/** Peak and current resident memory of a process, in kB, from /proc; undefined once it is gone. */
function memoryOf(pid: number): { hwmKb: number; rssKb: number } | undefined {
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    const hwm = /^VmHWM:\s+(\d+) kB/m.exec(status);
    const rss = /^VmRSS:\s+(\d+) kB/m.exec(status);
    if (!hwm || !rss) return undefined;
    return { hwmKb: Number(hwm[1]), rssKb: Number(rss[1]) };
  } catch {
    return undefined;
  }
}

export interface RssSample {
  /** Seconds after spawn. */
  t: number;
  rssKb: number;
}

export interface SendRun {
  exitCode: number | null;
  /** process.hrtime at spawn, in ns: the clock V8's CPU profiles use (CLOCK_MONOTONIC on Linux). */
  spawnedAtNs: bigint;
  /** VmRSS every 50 ms, to tell which phase the peak belongs to. */
  rss: RssSample[];
  /**
   * Spawn to exit, in wall-clock ms since the epoch (the journal's timestamps use the same clock).
   */
  startedAtMs: number;
  endedAtMs: number;
  seconds: number;
  peakRssKb: number;
  /** CPU seconds of the process, as last sampled (up to 50 ms before it exited). */
  cpuSeconds: number;
  /** The last JSON line `send --json` printed, or undefined. */
  summary: Record<string, unknown> | undefined;
  stderrTail: string;
}

/**
 * `smsdrop send FILE --json`, watched from outside. nodeArgs go before the script (e.g.
 * --cpu-prof), sendArgs after `--json` (e.g. --dry-run).
 */
export function runSend(
  source: CliSource,
  file: string,
  env: NodeJS.ProcessEnv,
  nodeArgs: string[] = [],
  sendArgs: string[] = [],
  startAs: SendStart = 'node',
): Promise<SendRun> {
  const startedAtMs = Date.now();
  const start = process.hrtime.bigint();
  const args = ['send', file, '--json', ...sendArgs];
  // bin/smsdrop runs dist/cli.js unless asked for the source.
  if (startAs === 'bin' && source === 'src') env = { ...env, SMSDROP_FROM_SOURCE: '1' };
  const child = spawnTracked(sendCommand(startAs, source, args, nodeArgs), {
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let peakRssKb = 0;
  let cpuSeconds = 0;
  const rss: RssSample[] = [];
  const sample = () => {
    const m = child.pid === undefined ? undefined : memoryOf(child.pid);
    if (!m) return;
    cpuSeconds = cpuSecondsOf(child.pid!) ?? cpuSeconds;
    peakRssKb = Math.max(peakRssKb, m.hwmKb, m.rssKb);
    rss.push({ t: Number(process.hrtime.bigint() - start) / 1e9, rssKb: m.rssKb });
  };
  const timer = setInterval(sample, RSS_SAMPLE_MS);
  let stdout = '';
  let stderr = '';
  child.stdout!.on('data', (d) => (stdout += d));
  child.stderr!.on('data', (d) => (stderr = (stderr + d).slice(-4000)));
  return new Promise((resolve, reject) => {
    child.once('error', reject);
    child.once('close', (code) => {
      clearInterval(timer);
      const seconds = Number(process.hrtime.bigint() - start) / 1e9;
      resolve({
        exitCode: code,
        spawnedAtNs: start,
        rss,
        startedAtMs,
        endedAtMs: Date.now(),
        seconds,
        peakRssKb,
        cpuSeconds,
        summary: lastJson(stdout),
        stderrTail: stderr.trim(),
      });
    });
  });
}

function lastJson(text: string): Record<string, unknown> | undefined {
  try {
    return JSON.parse(text.trim().split('\n').pop() ?? '') as Record<string, unknown>;
  } catch {
    return undefined;
  }
}

/** True when this build of the CLI has a `report` command (another issue adds it). */
export function hasReportCommand(source: CliSource, env: NodeJS.ProcessEnv): boolean {
  const r = spawnSync(process.execPath, [...cliArgs(source), '--help'], { env, encoding: 'utf8' });
  return /^\s+report\b/m.test(r.stdout ?? '');
}

/** Wall time of `smsdrop report NAME --format json` on the journal, or an error text. */
export function timeReport(
  source: CliSource,
  name: string,
  env: NodeJS.ProcessEnv,
): { seconds: number; ok: boolean; error?: string } {
  const start = process.hrtime.bigint();
  const r = spawnSync(process.execPath, [...cliArgs(source), 'report', name, '--format', 'json'], {
    env,
    encoding: 'utf8',
    maxBuffer: 64 * 1024 * 1024,
  });
  const seconds = Number(process.hrtime.bigint() - start) / 1e9;
  return r.status === 0
    ? { seconds, ok: true }
    : { seconds, ok: false, error: `exit ${r.status}: ${(r.stderr ?? '').trim().slice(0, 300)}` };
}
