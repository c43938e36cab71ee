// `npm run bench -- --daemon [--rows N] [--files N] [--database sqlite|postgres] ...`: the daemon
// measured as it runs. `smsdrop run` is started as the README starts it (bin/smsdrop, with the
// Node settings it gives) or, with `--start node`, as plain `node dist/cli.js run`; once it watches
// its inbox, a generated list is dropped whole (copied as NAME.part, then renamed), and again for
// each of `--files` (each file its own numbers, so none is a repeat of the one before). Sampled
// from /proc every 50 ms: the resident memory at idle before the first drop, its peak (VmHWM) while
// each file is taken and sent, when the file reaches done/, and after `--idle-s` seconds of idle.
// From the journal: the time from the drop, and from the take (files.created_at), to the file's
// first request, and requests/s from its first request to its last answer.
import { copyFileSync, mkdirSync, mkdtempSync, renameSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { parseArgs } from 'node:util';
import { startPostgres, type Postgres } from '../test/pg/cluster.js';
import { generateCsv, MIX, SIMULATOR_TEMPLATES } from './generate.js';
import { type DaemonFigures, journalFigures, printDaemonTable } from './daemonOutput.js';
import { type DaemonProcess, startDaemon, type StartAs } from './daemonProcess.js';
import { build, childEnv, type CliSource, startSimulatorProcess } from './processes.js';

export interface DaemonBenchOptions {
  rows: number;
  files: number;
  personalised: number;
  latencyMs: number;
  concurrency: number;
  idleS: number;
  seed: number;
  database: 'sqlite' | 'postgres';
  startAs: StartAs;
  cli: CliSource;
  build: boolean;
  keep: boolean;
  json: boolean;
  timeoutS: number;
  /** Extra environment for the daemon (--env KEY=VALUE). */
  env: Record<string, string>;
}

export const DAEMON_USAGE = `usage: npm run bench -- --daemon [--rows N] [--files N] [--database sqlite|postgres]
       [--personalised SHARE] [--latency-ms N] [--concurrency N] [--idle-s N] [--seed N]
       [--start bin|node] [--cli dist|src] [--no-build] [--keep] [--json] [--timeout-s N]
       [--env KEY=VALUE ...]
  --rows      rows of each dropped list (default 1,000,000; the send bench's mix)
  --files     lists dropped one after another into the same daemon (default 1)
  --idle-s    idle seconds after each file before its last memory sample (default 5)
  --start     bin: bin/smsdrop, as the README starts it (default); node: node dist/cli.js`;

export const wantsDaemon = (argv: string[]) => argv.includes('--daemon');

function whole(name: string, text: string | undefined, fallback: number, min: number): number {
  if (text === undefined) return fallback;
  const n = Number(text.replaceAll('_', ''));
  if (!Number.isInteger(n) || n < min)
    throw new Error(`Expected \`--${name}\` to be a whole number >= ${min}, got \`${text}\``);
  return n;
}

function oneOf<T extends string>(name: string, text: string, allowed: readonly T[]): T {
  if (!(allowed as readonly string[]).includes(text))
    throw new Error(`Expected \`--${name}\` to be ${allowed.join(' or ')}, got \`${text}\``);
  return text as T;
}

function keyValues(items: string[]): Record<string, string> {
  const out: Record<string, string> = {};
  for (const item of items) {
    const m = /^([A-Za-z_][A-Za-z0-9_]*)=(.*)$/s.exec(item);
    if (!m) throw new Error(`Expected \`--env\` to be KEY=VALUE, got \`${item}\``);
    out[m[1]!] = m[2]!;
  }
  return out;
}

export function parseDaemonOptions(argv: string[]): DaemonBenchOptions {
  const text = { type: 'string' } as const;
  const flag = { type: 'boolean', default: false } as const;
  const { values: v } = parseArgs({
    args: argv,
    options: {
      daemon: flag,
      rows: text,
      files: text,
      personalised: text,
      'latency-ms': text,
      concurrency: text,
      'idle-s': text,
      seed: text,
      database: { type: 'string', default: 'sqlite' },
      start: { type: 'string', default: 'bin' },
      cli: { type: 'string', default: 'dist' },
      'no-build': flag,
      keep: flag,
      json: flag,
      'timeout-s': text,
      env: { type: 'string', multiple: true },
    },
  });
  const personalised = v.personalised === undefined ? MIX.personalised : Number(v.personalised);
  if (!(personalised >= 0 && personalised <= 0.99))
    throw new Error(`Expected \`--personalised\` to be a share from 0 to 0.99`);
  const cli = oneOf('cli', v.cli, ['dist', 'src'] as const);
  return {
    rows: whole('rows', v.rows, 1_000_000, 1),
    files: whole('files', v.files, 1, 1),
    personalised,
    latencyMs: whole('latency-ms', v['latency-ms'], 50, 0),
    concurrency: whole('concurrency', v.concurrency, 32, 1),
    idleS: whole('idle-s', v['idle-s'], 5, 0),
    seed: whole('seed', v.seed, 1, 0),
    database: oneOf('database', v.database, ['sqlite', 'postgres'] as const),
    startAs: oneOf('start', v.start, ['bin', 'node'] as const),
    cli,
    build: cli === 'dist' && !v['no-build'],
    keep: v.keep,
    json: v.json,
    timeoutS: whole('timeout-s', v['timeout-s'], 1800, 1),
    env: keyValues(v.env ?? []),
  };
}

export interface DaemonBenchResult {
  mode: 'daemon';
  journal: 'sqlite' | 'postgres';
  startAs: StartAs;
  rows: number;
  personalised: number;
  latencyMs: number;
  concurrency: number;
  /** What the daemon was started with: its Node flags and MALLOC_ARENA_MAX, as /proc shows them. */
  nodeArgs: string[];
  mallocArenaMax: string | null;
  /** Resident memory once the daemon watched its inbox, before the first drop, MB. */
  idleRssMb: number;
  files: DaemonFigures[];
  ok: boolean;
  problems: string[];
  machine: { cpus: number; node: string; loadAvgStart: number[]; loadAvgEnd: number[] };
}

const CREDS = {
  accountSid: 'ACbench0000000000000000000000001',
  authToken: 'benchtoken000000000000000000001',
  appId: 'APPbench000000000000000000000001',
};

const note = (text: string) => process.stderr.write(`bench: ${text}\n`);
const round = (x: number, digits = 3) => Number(x.toFixed(digits));
const mb = (kb: number) => round(kb / 1024, 1);
const fileName = (i: number) => `daemon-list-${i + 1}.csv`;

/** Copied in as NAME.part (ignored by the watcher), then renamed: the file appears whole. */
function drop(workDir: string, dataDir: string, name: string): number {
  const part = path.join(dataDir, 'inbox', `${name}.part`);
  copyFileSync(path.join(workDir, name), part);
  const at = Date.now();
  renameSync(part, path.join(dataDir, 'inbox', name));
  return at;
}

/** One file: dropped, waited for in done/, then idle; its memory and the journal's figures. */
async function oneFile(
  o: DaemonBenchOptions,
  d: DaemonProcess,
  ctx: { workDir: string; dataDir: string; databaseUrl?: string },
  i: number,
): Promise<DaemonFigures> {
  const name = fileName(i);
  d.resetPeak();
  const beforeKb = d.rssKb();
  note(`file ${i + 1} of ${o.files}: dropping ${o.rows} rows`);
  const droppedAtMs = drop(ctx.workDir, ctx.dataDir, name);
  const where = await d.waitForFile(name, o.timeoutS * 1000);
  const doneAtMs = Date.now();
  const peakKb = d.peakKb();
  const afterDoneKb = d.rssKb();
  await sleep(o.idleS * 1000);
  const afterIdleKb = d.rssKb();
  const j = await journalFigures(ctx, name);
  return {
    file: name,
    outcome: where,
    rssBeforeMb: mb(beforeKb),
    peakRssMb: mb(peakKb),
    rssAfterDoneMb: mb(afterDoneKb),
    rssAfterIdleMb: mb(afterIdleKb),
    dropToDoneS: round((doneAtMs - droppedAtMs) / 1000),
    dropToFirstRequestS: j.firstRequestAtMs
      ? round((j.firstRequestAtMs - droppedAtMs) / 1000)
      : null,
    takeToFirstRequestS:
      j.firstRequestAtMs && j.takenAtMs ? round((j.firstRequestAtMs - j.takenAtMs) / 1000) : null,
    requests: j.requests,
    accepted: j.accepted,
    requestsPerSec: j.sendingSeconds > 0 ? round(j.requests / j.sendingSeconds, 1) : null,
  };
}

async function generateFiles(o: DaemonBenchOptions, workDir: string) {
  const mixes = [];
  for (let i = 0; i < o.files; i++) {
    note(`generating ${o.rows} rows (${fileName(i)})`);
    const file = path.join(workDir, fileName(i));
    mixes.push(await generateCsv(file, o.rows, o.seed + i, o.personalised, o.rows * i));
  }
  return mixes;
}

function judge(o: DaemonBenchOptions, files: DaemonFigures[], expected: number[]): string[] {
  const problems: string[] = [];
  files.forEach((f, i) => {
    if (f.outcome !== 'done') problems.push(`${f.file} went to ${f.outcome}/`);
    if (f.accepted !== expected[i])
      problems.push(`${f.file}: ${f.accepted} accepted, the generator expects ${expected[i]}`);
  });
  if (files.length < o.files) problems.push(`${o.files - files.length} files not measured`);
  return problems;
}

async function measure(
  o: DaemonBenchOptions,
  workDir: string,
  databaseUrl: string | undefined,
): Promise<Omit<DaemonBenchResult, 'machine'>> {
  const mixes = await generateFiles(o, workDir);
  const sim = await startSimulatorProcess(
    o.cli,
    childEnv(workDir, CREDS, {}),
    o.latencyMs,
    SIMULATOR_TEMPLATES,
  );
  const dataDir = path.join(workDir, 'data');
  mkdirSync(dataDir, { recursive: true });
  const env = childEnv(workDir, CREDS, {
    SMSDROP_BASE_URL: sim.url,
    SMSDROP_DATA_DIR: dataDir,
    SMSDROP_CONCURRENCY: String(o.concurrency),
    SMSDROP_STABILITY_MS: '300',
    SMSDROP_HTTP: 'off',
    ...(databaseUrl ? { SMSDROP_DATABASE_URL: databaseUrl } : {}),
    ...o.env,
  });
  const d = startDaemon(o.startAs, o.cli, env, dataDir);
  const files: DaemonFigures[] = [];
  const problems: string[] = [];
  let idleRssMb = 0;
  let started = { nodeArgs: [] as string[], mallocArenaMax: null as string | null };
  try {
    await d.waitUntilWatching();
    started = { nodeArgs: d.nodeArgs(), mallocArenaMax: d.mallocArenaMax() };
    await sleep(1000); // its start-up settled: the idle figure
    idleRssMb = mb(d.rssKb());
    for (let i = 0; i < o.files; i++)
      files.push(await oneFile(o, d, { workDir, dataDir, databaseUrl }, i));
  } catch (err) {
    problems.push((err as Error).message);
  } finally {
    await d.stop();
    await sim.stop();
  }
  return {
    mode: 'daemon',
    journal: o.database,
    startAs: o.startAs,
    rows: o.rows,
    personalised: o.personalised,
    latencyMs: o.latencyMs,
    concurrency: o.concurrency,
    ...started,
    idleRssMb,
    files,
    problems: [
      ...problems,
      ...judge(
        o,
        files,
        mixes.map((m) => m.expectedAccepted),
      ),
    ],
    ok: false,
  };
}

export async function runDaemonBench(o: DaemonBenchOptions): Promise<DaemonBenchResult> {
  const loadAvgStart = os.loadavg().map((x) => round(x, 2));
  if (o.build) {
    note('npm run build');
    const b = build();
    if (!b.ok) note(`build reported errors (going on with what was emitted):\n${b.output}`);
  }
  const workDir = mkdtempSync(path.join(os.tmpdir(), 'smsdrop-bench-daemon-'));
  let cluster: Postgres | undefined;
  try {
    if (o.database === 'postgres') note('starting a throwaway PostgreSQL');
    cluster = o.database === 'postgres' ? await startPostgres() : undefined;
    const r = await measure(o, workDir, await cluster?.freshDatabase());
    return {
      ...r,
      ok: r.problems.length === 0,
      machine: {
        cpus: os.cpus().length,
        node: process.version,
        loadAvgStart,
        loadAvgEnd: os.loadavg().map((x) => round(x, 2)),
      },
    };
  } finally {
    await cluster?.stop();
    if (o.keep) note(`kept ${workDir}`);
    else rmSync(workDir, { recursive: true, force: true });
  }
}

/** The mode's command line: figures on stdout (a table or one JSON object); 1 if a run is wrong. */
export async function daemonMain(argv: string[]): Promise<void> {
  let options: DaemonBenchOptions;
  try {
    options = parseDaemonOptions(argv);
  } catch (err) {
    process.stderr.write(`bench: ${(err as Error).message}\n${DAEMON_USAGE}\n`);
    process.exit(2);
  }
  for (const signal of ['SIGINT', 'SIGTERM'] as const)
    process.once(signal, () => process.exit(130));
  const result = await runDaemonBench(options);
  if (options.json) process.stdout.write(`${JSON.stringify(result)}\n`);
  else printDaemonTable(result);
  for (const p of result.problems) note(p);
  process.exit(result.ok ? 0 : 1);
}
