// `npm run bench -- --history N [--database sqlite|postgres] [--json] ...`: does a file cost more
// on a journal that holds a day's history? Fills one journal with N rows sent within the repeat
// window (history files of 50,000 rows, half of them mostly personalised, the others the usual
// mix; their numbers and values are the measured files' own, so nothing measured is a repeat),
// then times the same files on it and on an empty journal, each pair back to back: a one-row
// `send --dry-run`, then `send` of 20,000 and of 100,000 rows, with each one's peak RSS. A file's
// cost independent of its history gives ratios near 1.
//
// The history is filled fast, not sent: each file read through the ports as the pipeline reads it
// (test/pg/intakeRun.ts), then its batches given an attempt each, started within the last 20 hours,
// and their outcome (1 in 100 failed), by plain statements run as the journals run their rules.
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import Table from 'cli-table3';
import { openWriter } from '../src/journal/index.js';
import { runRule as runOnSqlite, SQLITE_DIALECT } from '../src/journal/rules.js';
import { openJournal } from '../src/journal/open.js';
import { journalPath } from '../src/journal/paths.js';
import { pgFileStore } from '../src/pgjournal/files.js';
import { PG_DIALECT, runRule as runOnPostgres } from '../src/pgjournal/rules.js';
import { migratePostgres, openPool } from '../src/pgjournal/schema.js';
import { type Dialect, run, type Rule } from '../src/journalRules/rule.js';
import type { FileStore } from '../src/ports/files.js';
import { type Postgres, postgresBinDir, startPostgres } from '../test/pg/cluster.js';
import { intakeFile } from '../test/pg/intakeRun.js';
import { generateCsv, MIX, SIMULATOR_TEMPLATES } from './generate.js';
import {
  build,
  childEnv,
  type CliSource,
  runSend,
  serverCpuSecondsOf,
  startSimulatorProcess,
} from './processes.js';

export interface HistoryOptions {
  history: number;
  database: 'sqlite' | 'postgres';
  sizes: number[];
  latencyMs: number;
  concurrency: number;
  seed: number;
  cli: CliSource;
  build: boolean;
  keep: boolean;
  json: boolean;
  /** Rounds of the measured files, each on new numbers, each round's pairs in the other order. */
  repeat: number;
}

export const HISTORY_USAGE = `usage: npm run bench -- --history N [--database sqlite|postgres] [--sizes 20000,100000]
       [--latency-ms N] [--concurrency N] [--seed N] [--repeat N] [--cli dist|src] [--no-build]
       [--keep] [--json]`;

/** True when the arguments ask for this mode. */
export const wantsHistory = (argv: string[]) =>
  argv.some((a) => a === '--history' || a.startsWith('--history='));

function whole(name: string, text: string | undefined, fallback: number, min: number): number {
  if (text === undefined) return fallback;
  const n = Number(text.replaceAll('_', ''));
  if (!Number.isInteger(n) || n < min)
    throw new Error(`Expected \`--${name}\` to be a whole number >= ${min}, got \`${text}\``);
  return n;
}

export function parseHistoryOptions(argv: string[]): HistoryOptions {
  const text = { type: 'string' } as const;
  const flag = { type: 'boolean', default: false } as const;
  const { values: v } = parseArgs({
    args: argv,
    options: {
      history: text,
      database: { type: 'string', default: 'sqlite' },
      sizes: text,
      'latency-ms': text,
      concurrency: text,
      seed: text,
      repeat: text,
      cli: { type: 'string', default: 'dist' },
      'no-build': flag,
      keep: flag,
      json: flag,
    },
  });
  if (v.database !== 'sqlite' && v.database !== 'postgres')
    throw new Error(`Expected \`--database\` to be sqlite or postgres, got \`${v.database}\``);
  if (v.cli !== 'dist' && v.cli !== 'src')
    throw new Error(`Expected \`--cli\` to be dist or src, got \`${v.cli}\``);
  return {
    history: whole('history', v.history, 0, 1),
    database: v.database,
    sizes: (v.sizes ?? '20000,100000').split(',').map((s) => whole('sizes', s, 0, 1)),
    latencyMs: whole('latency-ms', v['latency-ms'], 0, 0),
    concurrency: whole('concurrency', v.concurrency, 8, 1),
    seed: whole('seed', v.seed, 1, 0),
    cli: v.cli,
    build: v.cli === 'dist' && !v['no-build'],
    keep: v.keep,
    json: v.json,
    repeat: whole('repeat', v.repeat, 1, 1),
  };
}

const CREDS = {
  accountSid: 'ACbench0000000000000000000000001',
  authToken: 'benchtoken000000000000000000001',
  appId: 'APPbench000000000000000000000001',
};
/** Rows of each history file. */
const HISTORY_FILE_ROWS = 50_000;
/** The history's first number (generate.ts's phoneAt): far past the measured files' numbers. */
const HISTORY_FIRST = 100_000_000;
/** The measured files' first numbers, one file each: the dry run's, then each send's. */
const MEASURED_FIRST_STEP = 1_000_000;
/** The history's attempts started over this much time before the bench: within the window. */
const HISTORY_SPREAD_MS = 20 * 3_600_000;

const note = (t: string) => process.stderr.write(`bench: ${t}\n`);
const round = (x: number, digits = 3) => Number(x.toFixed(digits));

/** A journal of the pair: where smsdrop finds it, and how its history is filled. */
interface Journal {
  dataDir: string;
  databaseUrl?: string;
}

/** The batches of file `fileId` sent: an attempt each at `at`, 1 in 100 failed; the file done. */
function* sentAt(d: Dialect, fileId: number, at: string): Rule<void> {
  const failed = 'id % 100 = 0';
  yield* run(
    `INSERT INTO attempts (batch_id, req_id, started_at, finished_at, outcome, status_code)
     SELECT id, '', ${d.storedTime('?')}, ${d.storedTime('?')}, CASE WHEN ${failed} THEN 'failed' ELSE 'accepted' END,
       CASE WHEN ${failed} THEN '160038' ELSE '000000' END
     FROM batches WHERE file_id = ?`,
    at,
    at,
    fileId,
  );
  yield* run(
    `UPDATE batches SET state = CASE WHEN ${failed} THEN 'failed' ELSE 'accepted' END,
       attempts = 1, next_attempt_at = 0, updated_at = ${d.storedTime('?')},
       status_code = CASE WHEN ${failed} THEN '160038' ELSE '000000' END
     WHERE file_id = ?`,
    at,
    fileId,
  );
  yield* run("UPDATE files SET status = 'done', finished_at = ? WHERE id = ?", at, fileId);
}

interface Filler {
  files: FileStore;
  markSent(fileId: number, at: string): Promise<void>;
  close(): Promise<void>;
}

async function fillerOf(journal: Journal): Promise<Filler> {
  if (journal.databaseUrl) {
    const pool = openPool(journal.databaseUrl, 4);
    await migratePostgres(pool);
    return {
      // A claim as long as the fill: nothing renews it here, as a daemon's heartbeat would.
      files: pgFileStore(pool, { reader: { node: 'bench-history', leaseMs: 24 * 3_600_000 } }),
      markSent: (fileId, at) => runOnPostgres(pool, sentAt(PG_DIALECT, fileId, at)),
      close: () => pool.end(),
    };
  }
  const { handle } = openWriter(journal.dataDir, {
    role: 'bench',
    synchronous: 'normal',
    reqIdOn: true,
    onLost: () => undefined,
  });
  return {
    files: handle.files,
    markSent: (fileId, at) => {
      const db = openJournal(journalPath(journal.dataDir));
      try {
        runOnSqlite(db, sentAt(SQLITE_DIALECT, fileId, at));
      } finally {
        db.close();
      }
      return Promise.resolve();
    },
    close: () => handle.close(),
  };
}

/** Fills the journal with `o.history` rows sent within the window; the seconds it took. */
async function fillHistory(o: HistoryOptions, journal: Journal, workDir: string) {
  const started = performance.now();
  const filler = await fillerOf(journal);
  const files = Math.ceil(o.history / HISTORY_FILE_ROWS);
  try {
    for (let i = 0; i < files; i++) {
      const rows = Math.min(HISTORY_FILE_ROWS, o.history - i * HISTORY_FILE_ROWS);
      const csv = path.join(workDir, `history-${i}.csv`);
      const personalised = i % 2 === 0 ? 0.9 : MIX.personalised;
      await generateCsv(csv, rows, o.seed + i + 1, personalised, HISTORY_FIRST + i * 1_000_000);
      const { fileId } = await intakeFile(csv, { files: filler.files });
      const at = new Date(Date.now() - HISTORY_SPREAD_MS * (1 - i / files)).toISOString();
      await filler.markSent(fileId, at);
      rmSync(csv);
      note(`history: ${Math.min((i + 1) * HISTORY_FILE_ROWS, o.history)} of ${o.history} rows`);
    }
  } finally {
    await filler.close();
  }
  return { files, seconds: round((performance.now() - started) / 1000, 1) };
}

interface Measured {
  seconds: number;
  /** CPU seconds of the process: steadier than the wall time on a shared machine. */
  cpuSeconds: number;
  /** CPU seconds of the PostgreSQL server (every process of it) during the send; null on SQLite. */
  serverCpuSeconds: number | null;
  peakRssMb: number;
  exitCode: number | null;
  status: string | null;
  accepted: number | null;
  repeats: number | null;
}

interface Pair {
  file: string;
  rows: number;
  round: number;
  empty: Measured;
  history: Measured;
  timeRatio: number;
  cpuRatio: number;
  /** Client and server CPU together (PostgreSQL), over the same on the empty journal. */
  allCpuRatio: number | null;
  rssRatio: number;
}

async function measure(
  o: HistoryOptions,
  journal: Journal,
  csv: string,
  run: SendRun,
): Promise<Measured> {
  const { baseUrl, dryRun } = run;
  const env = childEnv(path.dirname(journal.dataDir), CREDS, {
    SMSDROP_BASE_URL: baseUrl,
    SMSDROP_DATA_DIR: journal.dataDir,
    SMSDROP_CONCURRENCY: String(o.concurrency),
    ...(journal.databaseUrl ? { SMSDROP_DATABASE_URL: journal.databaseUrl } : {}),
  });
  const serverBefore = run.serverCpu?.();
  const r = await runSend(o.cli, csv, env, [], dryRun ? ['--dry-run'] : []);
  const serverCpuSeconds =
    serverBefore === undefined ? null : round(run.serverCpu!() - serverBefore, 2);
  const s = r.summary ?? {};
  const num = (k: string) => (typeof s[k] === 'number' ? s[k] : null);
  if (r.exitCode !== 0 && r.exitCode !== 3) note(`send exited ${r.exitCode}: ${r.stderrTail}`);
  return {
    seconds: round(r.seconds),
    cpuSeconds: round(r.cpuSeconds, 2),
    serverCpuSeconds,
    peakRssMb: round(r.peakRssKb / 1024, 1),
    exitCode: r.exitCode,
    status: typeof s.status === 'string' ? s.status : null,
    accepted: num('accepted'),
    repeats: num('repeats'),
  };
}

/** How a measured send runs: its simulator, whether dry, the server's CPU so far (PostgreSQL). */
interface SendRun {
  baseUrl: string;
  dryRun: boolean;
  serverCpu: (() => number) | undefined;
}

/** A file measured on both journals: round `round`'s order (even: empty first). */
async function measurePair(
  o: HistoryOptions,
  pair: [Journal, Journal],
  f: { name: string; rows: number; csv: string; round: number },
  run: SendRun,
): Promise<Pair> {
  note(
    `${f.name}, round ${f.round + 1}: ${f.round % 2 ? 'history, then empty' : 'empty, then history'}`,
  );
  const order = f.round % 2 ? [1, 0] : [0, 1];
  const got: Measured[] = [];
  for (const i of order) got[i] = await measure(o, pair[i]!, f.csv, run);
  const [empty, history] = got as [Measured, Measured];
  const allCpu = (m: Measured) => m.cpuSeconds + (m.serverCpuSeconds ?? 0);
  return {
    file: f.name,
    rows: f.rows,
    round: f.round,
    empty,
    history,
    timeRatio: round(history.seconds / empty.seconds, 2),
    cpuRatio: round(history.cpuSeconds / empty.cpuSeconds, 2),
    allCpuRatio: empty.serverCpuSeconds === null ? null : round(allCpu(history) / allCpu(empty), 2),
    rssRatio: round(history.peakRssMb / empty.peakRssMb, 2),
  };
}

/**
 * Each measured file on both journals, `o.repeat` rounds of them: each round's files have numbers
 * of their own (nothing measured is a repeat of an earlier round), and every other round measures
 * the history first, so that a machine getting busier or quieter does not favour one side.
 */
async function measurePairs(
  o: HistoryOptions,
  pair: [Journal, Journal],
  workDir: string,
  serverCpu: (() => number) | undefined,
) {
  const sim = await startSimulatorProcess(
    o.cli,
    childEnv(workDir, CREDS, {}),
    o.latencyMs,
    SIMULATOR_TEMPLATES,
  );
  const pairs: Pair[] = [];
  try {
    const files = [{ rows: 1, dryRun: true }, ...o.sizes.map((rows) => ({ rows, dryRun: false }))];
    for (let round = 0; round < o.repeat; round++)
      for (const [i, f] of files.entries()) {
        const csv = path.join(workDir, `measured-${round}-${i}.csv`);
        const first = (round * files.length + i) * MEASURED_FIRST_STEP;
        // values of their own too: a round's messages are none of an earlier round's
        await generateCsv(csv, f.rows, o.seed + round * 1000, MIX.personalised, first);
        const name = `${f.dryRun ? 'send --dry-run' : 'send'}, ${f.rows.toLocaleString('en-US')} row${f.rows === 1 ? '' : 's'}`;
        const run = { baseUrl: sim.url, dryRun: f.dryRun, serverCpu };
        pairs.push(await measurePair(o, pair, { name, rows: f.rows, csv, round }, run));
      }
  } finally {
    await sim.stop();
  }
  return pairs;
}

/**
 * PostgreSQL's upkeep of the fill, done before measuring: the fill writes a day's rows in a minute,
 * and the server's autovacuum of them and its checkpoints would otherwise land on the measured
 * sends, on the history's side only. A day's journal has had them during the day.
 */
async function settle(cluster: Postgres, pair: [Journal, Journal]): Promise<void> {
  note('VACUUM ANALYZE and CHECKPOINT after the fill');
  for (const journal of pair) {
    const pool = cluster.pool(journal.databaseUrl!, 1);
    await pool.query('VACUUM ANALYZE');
    await pool.query('CHECKPOINT');
    await pool.end();
  }
}

const median = (xs: number[]) => {
  const sorted = [...xs].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
};

/** Each file's median ratios over the rounds. */
function mediansOf(pairs: Pair[]) {
  const files = [...new Set(pairs.map((p) => p.file))];
  return files.map((file) => {
    const of = pairs.filter((p) => p.file === file);
    const all = of.map((p) => p.allCpuRatio).filter((r): r is number => r !== null);
    return {
      file,
      rounds: of.length,
      timeRatio: round(median(of.map((p) => p.timeRatio)), 2),
      cpuRatio: round(median(of.map((p) => p.cpuRatio)), 2),
      allCpuRatio: all.length ? round(median(all), 2) : null,
      rssRatio: round(median(of.map((p) => p.rssRatio)), 2),
    };
  });
}

/** The two journals: fresh SQLite data folders, or two fresh databases of one cluster. */
async function journalPair(workDir: string, cluster: Postgres | undefined) {
  const dir = (name: string) => {
    const d = path.join(workDir, name, 'data');
    mkdirSync(d, { recursive: true });
    return d;
  };
  const url = async () => (cluster ? { databaseUrl: await cluster.freshDatabase() } : {});
  const empty: Journal = { dataDir: dir('empty'), ...(await url()) };
  const history: Journal = { dataDir: dir('history'), ...(await url()) };
  return [empty, history] as [Journal, Journal];
}

export async function runHistoryBench(o: HistoryOptions) {
  const loadAvgStart = os.loadavg().map((x) => round(x, 2));
  if (o.build) {
    note('npm run build');
    const b = build();
    if (!b.ok) note(`build reported errors (going on with what was emitted):\n${b.output}`);
  }
  if (o.database === 'postgres' && !postgresBinDir())
    throw new Error("PostgreSQL's server is not installed (pg_config --bindir has no initdb)");
  const workDir = mkdtempSync(path.join(os.tmpdir(), 'smsdrop-bench-history-'));
  const cluster = o.database === 'postgres' ? await startPostgres() : undefined;
  try {
    const pair = await journalPair(workDir, cluster);
    note(`filling a journal with ${o.history} rows sent within the repeat window`);
    const fill = await fillHistory(o, pair[1], workDir);
    if (cluster) await settle(cluster, pair);
    const serverCpu = cluster ? () => serverCpuSecondsOf(cluster.pid) : undefined;
    const pairs = await measurePairs(o, pair, workDir, serverCpu);
    return {
      mode: 'history' as const,
      database: o.database,
      historyRows: o.history,
      historyFiles: fill.files,
      fillSeconds: fill.seconds,
      latencyMs: o.latencyMs,
      concurrency: o.concurrency,
      repeat: o.repeat,
      pairs,
      medians: mediansOf(pairs),
      worstTimeRatio: Math.max(...pairs.map((p) => p.timeRatio)),
      worstCpuRatio: Math.max(...pairs.map((p) => p.cpuRatio)),
      worstRssRatio: Math.max(...pairs.map((p) => p.rssRatio)),
      ok: pairs.every((p) => sameOutcome(p)),
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

/** Both runs of a file ended alike: the same rows accepted, none a repeat of the history's. */
function sameOutcome(p: Pair): boolean {
  return (
    p.empty.status === p.history.status &&
    p.empty.accepted === p.history.accepted &&
    (p.history.repeats ?? 0) === 0
  );
}

export type HistoryResult = Awaited<ReturnType<typeof runHistoryBench>>;

export function printHistoryTable(r: HistoryResult): void {
  const table = new Table({
    head: [
      'file',
      'empty s',
      'history s',
      'ratio',
      'CPU s',
      'ratio',
      'server CPU s',
      'all CPU ratio',
      'empty MB',
      'history MB',
      'ratio',
      'alike',
    ],
    style: { head: [], border: [] },
  });
  const server = (m: { serverCpuSeconds: number | null }) => m.serverCpuSeconds?.toFixed(2) ?? '-';
  for (const p of r.pairs)
    table.push([
      r.repeat > 1 ? `${p.file} (${p.round + 1})` : p.file,
      p.empty.seconds.toFixed(2),
      p.history.seconds.toFixed(2),
      p.timeRatio.toFixed(2),
      `${p.empty.cpuSeconds.toFixed(2)} / ${p.history.cpuSeconds.toFixed(2)}`,
      p.cpuRatio.toFixed(2),
      `${server(p.empty)} / ${server(p.history)}`,
      p.allCpuRatio?.toFixed(2) ?? '-',
      p.empty.peakRssMb.toFixed(1),
      p.history.peakRssMb.toFixed(1),
      p.rssRatio.toFixed(2),
      sameOutcome(p) ? 'yes' : 'NO',
    ]);
  const lines = [
    `${r.database}: a journal holding ${r.historyRows.toLocaleString('en-US')} rows sent within the repeat window (${r.historyFiles} file(s), filled in ${r.fillSeconds} s) against an empty one, each file on both back to back`,
    table.toString(),
    ...(r.repeat > 1
      ? r.medians.map(
          (m) =>
            `median of ${m.rounds} rounds, ${m.file}: time ${m.timeRatio}x, CPU ${m.cpuRatio}x${m.allCpuRatio === null ? '' : `, with the server's ${m.allCpuRatio}x`}, peak RSS ${m.rssRatio}x`,
        )
      : []),
    `machine: ${r.machine.cpus} CPUs, Node ${r.machine.node}, load ${r.machine.loadAvgStart.join(' ')} -> ${r.machine.loadAvgEnd.join(' ')}; shared machine: compare the ratios`,
  ];
  process.stdout.write(`${lines.join('\n')}\n`);
}

/** The mode's command line: the table or one JSON object on stdout; 1 if a pair ended unlike. */
export async function historyMain(argv: string[]): Promise<void> {
  let options: HistoryOptions;
  try {
    options = parseHistoryOptions(argv);
  } catch (err) {
    process.stderr.write(`bench: ${(err as Error).message}\n${HISTORY_USAGE}\n`);
    process.exit(2);
  }
  for (const signal of ['SIGINT', 'SIGTERM'] as const)
    process.once(signal, () => process.exit(130));
  const result = await runHistoryBench(options);
  if (options.json) process.stdout.write(`${JSON.stringify(result)}\n`);
  else printHistoryTable(result);
  process.exit(result.ok ? 0 : 1);
}
