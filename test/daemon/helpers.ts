// Helpers for the daemon tests: real processes only. The simulator runs as its own process
// (`smsdrop simulate --record FILE`) so its record of accepted requests outlives a killed daemon,
// and the daemon is `node --import tsx src/cli.ts run` on a fresh temporary data directory.
import assert from 'node:assert/strict';
import { type ChildProcess, spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { parse } from 'csv-parse/sync';
import { unguardCell } from '../../src/csvio/index.js';
import { readRecordFile } from '../../src/simulator/record.js';
import { isolatedSettings } from '../emptyConfig.js';
import type { AcceptedRecord } from '../../src/simulator/types.js';

export const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
export const CLI = path.join(REPO, 'src', 'cli.ts');

/** Test credentials, read by both the simulator and the daemon. The token must never be printed. */
export const CREDENTIALS = {
  SMSDROP_ACCOUNT_SID: '8a216da8daemon000000000000acc001',
  SMSDROP_AUTH_TOKEN: 'd4em0nSecretT0ken000000000000042',
  SMSDROP_APP_ID: '8a216da8daemon000000000000app001',
};

/**
 * The environment without any SMSDROP_* or PM2_* setting of whoever runs the tests, and with an
 * empty config file instead of the repository's config/local.json (the processes run in REPO,
 * where a developer's own local.json would otherwise change what the tests see), and the HTTP
 * surface on any free port.
 */
export function cleanEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env = Object.fromEntries(
    Object.entries(process.env).filter(
      ([k]) => !k.startsWith('SMSDROP_') && !k.startsWith('PM2_') && k !== 'NODE_OPTIONS',
    ),
  );
  // Any free port for the daemon's HTTP surface: many daemons run at once (the log says which
  // port).
  return { ...env, ...isolatedSettings(), SMSDROP_HTTP: '127.0.0.1:0', ...extra };
}

export function tempDir(prefix: string): string {
  return fs.mkdtempSync(path.join(os.tmpdir(), `smsdrop-${prefix}-`));
}

/** A child process whose output is kept, with its exit as a promise. */
export interface Proc {
  child: ChildProcess;
  output: () => string;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /** Resolves with the output once `pattern` appears in it. */
  waitFor(pattern: RegExp, timeoutMs?: number): Promise<string>;
  kill(signal?: NodeJS.Signals): void;
}

/**
 * `user`: another user to run it as (root only), e.g. one whom file modes stop. `nodeArgs`: options
 * for node itself (before the CLI).
 */
export function startProcess(
  args: string[],
  env: NodeJS.ProcessEnv,
  user?: { uid: number; gid: number },
  nodeArgs: string[] = [],
): Proc {
  const child = spawn(process.execPath, [...nodeArgs, '--import', 'tsx', CLI, ...args], {
    cwd: REPO,
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
    ...user,
  });
  let text = '';
  child.stdout.on('data', (d: Buffer) => (text += d.toString()));
  child.stderr.on('data', (d: Buffer) => (text += d.toString()));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once('exit', (code, signal) => resolve({ code, signal })),
  );
  /** How it ended, once it has. */
  let ended: string | undefined;
  void exited.then(({ code, signal }) => {
    ended = signal ? `killed by ${signal}` : `exit code ${code}`;
  });
  return {
    child,
    output: () => text,
    exited,
    async waitFor(pattern, timeoutMs = 20_000) {
      await waitUntil(
        () => pattern.test(text) || ended !== undefined,
        timeoutMs,
        `output matching ${pattern}`,
        () => text,
      );
      // What it printed says why it ended: a CI run keeps nothing else of it.
      if (!pattern.test(text))
        assert.fail(
          `the process ended (${ended}) before printing ${pattern}; it printed:\n${text}`,
        );
      return text;
    },
    kill(signal = 'SIGTERM') {
      if (ended === undefined) child.kill(signal);
    },
  };
}

/** Polls `check` every 50 ms; fails with `what` (and `show()`) after `timeoutMs`. */
export async function waitUntil(
  check: () => boolean | Promise<boolean>,
  timeoutMs: number,
  what: string,
  show: () => string = () => '',
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline)
      assert.fail(`timed out after ${timeoutMs} ms waiting for ${what}\n${show()}`);
    await sleep(50);
  }
}

/** The daemon's HTTP address (SMSDROP_HTTP=127.0.0.1:0 picks any free port), from its log line. */
export function httpUrlOf(proc: Proc): string {
  const found = /dashboard, metrics and health check on (http:\/\/[^/\s]+)\//.exec(proc.output());
  assert.ok(found, `the daemon said no HTTP address:\n${proc.output()}`);
  return found[1]!;
}

export interface Simulator {
  url: string;
  recordFile: string;
  records(): AcceptedRecord[];
  stop(): Promise<void>;
}

export async function startSimulatorProcess(dir: string, flags: string[] = []): Promise<Simulator> {
  const recordFile = path.join(dir, 'accepted.jsonl');
  const proc = startProcess(['simulate', '--record', recordFile, ...flags], cleanEnv(CREDENTIALS));
  const text = await proc.waitFor(/listening on (\S+)/);
  const url = /listening on (\S+)/.exec(text)![1]!;
  return {
    url,
    recordFile,
    records: () => readRecordFile(recordFile),
    async stop() {
      proc.kill('SIGTERM');
      await proc.exited;
    },
  };
}

export interface DaemonSettings {
  dataDir: string;
  simulator?: Simulator;
  env?: Record<string, string>;
  /** Run as this user instead of the one running the tests (see startProcess). */
  user?: { uid: number; gid: number };
}

/** `smsdrop run`; resolves once it watches inbox/ (or has exited). */
export async function startDaemon(settings: DaemonSettings): Promise<Proc> {
  const proc = startProcess(['run'], daemonEnv(settings), settings.user);
  await proc.waitFor(/watching .*inbox/);
  return proc;
}

export function daemonEnv(settings: DaemonSettings): NodeJS.ProcessEnv {
  return cleanEnv({
    SMSDROP_DATA_DIR: settings.dataDir,
    SMSDROP_STABILITY_MS: '300',
    SMSDROP_LOG_LEVEL: 'info',
    ...(settings.simulator ? { ...CREDENTIALS, SMSDROP_BASE_URL: settings.simulator.url } : {}),
    ...settings.env,
  });
}

/**
 * A CSV for template 1 (two values); every row a different message. `bad` rows have a broken
 * number.
 */
export function contactsCsv(
  rows: number,
  options: { from?: number; tag?: string; bad?: number } = {},
): string {
  const from = options.from ?? 0;
  const lines = ['phone,template,data1,data2'];
  for (let i = 0; i < rows; i++)
    lines.push(`${13_800_000_000 + from + i},1,${options.tag ?? 'code'}${from + i},5`);
  for (let i = 0; i < (options.bad ?? 0); i++) lines.push(`12-34x${i},1,bad${i},5`);
  return `${lines.join('\n')}\n`;
}

/** How many times each number was accepted by the simulator. */
export function acceptedPerNumber(records: AcceptedRecord[]): Map<string, number> {
  const counts = new Map<string, number>();
  for (const r of records) for (const to of r.to) counts.set(to, (counts.get(to) ?? 0) + 1);
  return counts;
}

/** Asserts the numbers of a contactsCsv were each accepted exactly once, and nothing else was. */
export function assertEachOnce(records: AcceptedRecord[], numbers: string[]): void {
  const counts = acceptedPerNumber(records);
  const twice = [...counts].filter(([, n]) => n > 1);
  assert.deepEqual(twice, [], 'numbers accepted more than once');
  const missing = numbers.filter((n) => !counts.has(n));
  assert.deepEqual(missing.slice(0, 10), [], `${missing.length} numbers never accepted`);
  assert.equal(counts.size, numbers.length, 'numbers accepted that were not in the files');
}

export function numbersOf(rows: number, from = 0): string[] {
  return Array.from({ length: rows }, (_, i) => String(13_800_000_000 + from + i));
}

/** Records of a result CSV (BOM and header handled), keyed by header name. */
/** A result or rejected file's rows, each cell as the text it stands for (="000000" is 000000). */
export function resultRows(file: string): Record<string, string>[] {
  return parse<Record<string, string>>(fs.readFileSync(file), {
    bom: true,
    columns: true,
    cast: (value) => unguardCell(value),
  });
}

export function listDir(dir: string): string[] {
  return fs.existsSync(dir)
    ? fs
        .readdirSync(dir)
        .filter((n) => !n.startsWith('.'))
        .sort()
    : [];
}

/**
 * The daemon's JSON log lines in logDir, every day's file in order (a run crossing midnight has
 * two).
 */
export function readLogLines<T>(logDir: string): T[] {
  return listDir(logDir)
    .filter((n) => /^smsdrop-.*\.log$/.test(n))
    .flatMap((n) => readJsonLines<T>(path.join(logDir, n)));
}

/**
 * The complete lines of a JSON-lines log, parsed. A line still being written (or none) is left out.
 */
export function readJsonLines<T>(file: string): T[] {
  const lines = fs.readFileSync(file, 'utf8').split('\n');
  lines.pop(); // after the last newline: empty, or a line not finished yet
  return lines.filter((l) => l.trim() !== '').map((l) => JSON.parse(l) as T);
}

/** A one-hour window starting two hours from now in Shanghai: closed now, whatever the hour. */
export function closedWindow(): string {
  const hour = Number(
    new Intl.DateTimeFormat('en-GB', {
      timeZone: 'Asia/Shanghai',
      hourCycle: 'h23',
      hour: '2-digit',
    }).format(Date.now()),
  );
  const hh = (h: number) => String(h % 24).padStart(2, '0');
  return `${hh(hour + 2)}:00-${hh(hour + 3)}:00`;
}
