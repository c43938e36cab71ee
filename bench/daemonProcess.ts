// `smsdrop run` as the daemon bench starts and watches it: its resident memory from /proc every
// 50 ms (VmRSS, and VmHWM, the kernel's high-water mark, set back to the current size before each
// file by writing 5 to /proc/PID/clear_refs), its output read for the inbox being watched, and
// done/ and failed/ looked at for each dropped file.
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { cliArgs, type CliSource, exited, track } from './processes.js';

/** bin: bin/smsdrop, as the README starts it; node: `node dist/cli.js`, no settings of its own. */
export type StartAs = 'bin' | 'node';

export interface DaemonProcess {
  child: ChildProcess;
  waitUntilWatching(): Promise<void>;
  rssKb(): number;
  /** The most resident memory since the last resetPeak(). */
  peakKb(): number;
  resetPeak(): void;
  /** Resolves with the folder (done or failed) the file reached. */
  waitForFile(name: string, timeoutMs: number): Promise<'done' | 'failed'>;
  /** Node's own flags (before the script), from /proc/PID/cmdline. */
  nodeArgs(): string[];
  mallocArenaMax(): string | null;
  stop(): Promise<void>;
}

const ROOT = path.resolve(import.meta.dirname, '..');
const SAMPLE_MS = 50;
const READY_TIMEOUT_MS = 120_000;
const STOP_TIMEOUT_MS = 60_000;
const SETPRIV = '/usr/bin/setpriv';

function memory(pid: number): { rssKb: number; hwmKb: number } | undefined {
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    const rss = /^VmRSS:\s+(\d+) kB/m.exec(status);
    const hwm = /^VmHWM:\s+(\d+) kB/m.exec(status);
    return rss && hwm ? { rssKb: Number(rss[1]), hwmKb: Number(hwm[1]) } : undefined;
  } catch {
    return undefined;
  }
}

/** The command: bin/smsdrop execs node, so the child's pid is node's either way. */
function command(startAs: StartAs, cli: CliSource): string[] {
  if (startAs === 'bin') return ['/bin/sh', path.join(ROOT, 'bin/smsdrop'), 'run'];
  return [process.execPath, ...cliArgs(cli), 'run'];
}

/** Started under setpriv where it exists, so it dies with the bench even on SIGKILL. */
export function startDaemon(
  startAs: StartAs,
  cli: CliSource,
  env: NodeJS.ProcessEnv,
  dataDir: string,
): DaemonProcess {
  const args = command(startAs, cli);
  // bin/smsdrop runs dist/cli.js unless asked for the source.
  if (startAs === 'bin' && cli === 'src') env = { ...env, SMSDROP_FROM_SOURCE: '1' };
  const stdio = ['ignore', 'pipe', 'pipe'] as ['ignore', 'pipe', 'pipe'];
  const child = track(
    existsSync(SETPRIV)
      ? spawn(SETPRIV, ['--pdeathsig=SIGKILL', ...args], { env, stdio })
      : spawn(args[0]!, args.slice(1), { env, stdio }),
  );
  let output = '';
  const keep = (d: Buffer) => (output = (output + d.toString()).slice(-8000));
  child.stdout!.on('data', keep);
  child.stderr!.on('data', keep);
  let last = { rssKb: 0, hwmKb: 0 };
  let peak = 0;
  const sample = () => {
    const m = child.pid === undefined ? undefined : memory(child.pid);
    if (!m) return;
    last = m;
    peak = Math.max(peak, m.rssKb, m.hwmKb);
  };
  const timer = setInterval(sample, SAMPLE_MS);
  const gone = () => child.exitCode !== null || child.signalCode !== null;
  const folderOf = (name: string) =>
    (['done', 'failed'] as const).find((f) => existsSync(path.join(dataDir, f, name)));
  return {
    child,
    async waitUntilWatching() {
      const deadline = Date.now() + READY_TIMEOUT_MS;
      while (!/watching \S*inbox/.test(output)) {
        if (gone()) throw new Error(`the daemon exited before watching its inbox:\n${output}`);
        if (Date.now() > deadline) throw new Error('the daemon was not watching its inbox in time');
        await sleep(SAMPLE_MS);
      }
    },
    rssKb: () => (sample(), last.rssKb),
    peakKb: () => (sample(), peak),
    resetPeak() {
      try {
        writeFileSync(`/proc/${child.pid}/clear_refs`, '5');
      } catch {
        // Not allowed here: the peak is then the sampled one, and VmHWM's since the start.
      }
      sample();
      peak = last.rssKb;
    },
    async waitForFile(name, timeoutMs) {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const folder = folderOf(name);
        if (folder) return folder;
        if (gone()) throw new Error(`the daemon exited while ${name} was sent:\n${output}`);
        if (Date.now() > deadline) throw new Error(`${name} not done after ${timeoutMs / 1000} s`);
        await sleep(SAMPLE_MS);
      }
    },
    nodeArgs() {
      try {
        // Up to the CLI's script, without the loader (--import tsx) of a run from source.
        const argv = readFileSync(`/proc/${child.pid}/cmdline`, 'utf8').split('\0');
        const script = argv.findIndex((a) => /cli\.(js|ts)$/.test(a));
        const before = argv.slice(1, script);
        return before.filter((a, i) => a !== '--import' && before[i - 1] !== '--import');
      } catch {
        return [];
      }
    },
    mallocArenaMax() {
      try {
        const environ = readFileSync(`/proc/${child.pid}/environ`, 'utf8').split('\0');
        const entry = environ.find((e) => e.startsWith('MALLOC_ARENA_MAX='));
        return entry ? entry.slice('MALLOC_ARENA_MAX='.length) : null;
      } catch {
        return null;
      }
    },
    async stop() {
      clearInterval(timer);
      if (gone()) return;
      child.kill('SIGTERM');
      const kill = setTimeout(() => child.kill('SIGKILL'), STOP_TIMEOUT_MS);
      await exited(child);
      clearTimeout(kill);
    },
  };
}
