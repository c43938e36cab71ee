// `npm run bench -- --database postgres [--nodes N] ...`: the PostgreSQL journal measured. On one
// throwaway PostgreSQL (test/pg/cluster.ts: a child of this process with a parent-death signal,
// run as the postgres user when this runs as root):
//   1. intake rows/s into PostgreSQL against SQLite on the same generated file (pgIntake.ts);
//   2. requests/s of 1, 2 ... N `smsdrop run` daemons on one database at a simulated latency, each
//      node with the same SMSDROP_CONCURRENCY (nodes.ts), with the simulator's most requests at
//      once; then 1 to N nodes again at a long latency (--slow-latency-ms, 500 by default) with a
//      larger concurrency. Judged: one node on PostgreSQL at 0.9 of SQLite's requests/s or more,
//      and N nodes at 0.95 of one node's or more, in each series;
//   3. a 100-row file dropped on one node while another reads a large file: seconds from the drop
//      to its first request (smallFileWait.ts).
// Figures only; every load average is printed beside them (the machine is shared).
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import Table from 'cli-table3';
import { postgresBinDir, startPostgres } from '../test/pg/cluster.js';
import { generateCsv } from './generate.js';
import { type NodesRun, runNodes } from './nodes.js';
import { type IntakeRate, measureIntakePair } from './pgIntake.js';
import { measureSmallFileWait, type SmallFileWait } from './smallFileWait.js';
import { build, childEnv, type CliSource } from './processes.js';

export interface PostgresBenchOptions {
  nodes: number;
  rows: number;
  sendRows: number;
  personalised: number;
  latencyMs: number;
  concurrency: number;
  seed: number;
  repeat: number;
  cli: CliSource;
  build: boolean;
  keep: boolean;
  json: boolean;
  timeoutS: number;
  /** The node runs from N down to 1. */
  descending: boolean;
  /** Rows of the large file read while the small one is dropped (smallFileWait.ts). */
  largeRows: number;
  /** The second series of node runs, at a long latency (0: none), and its concurrency. */
  slowLatencyMs: number;
  slowConcurrency: number;
}

export const POSTGRES_USAGE = `usage: npm run bench -- --database postgres [--nodes N] [--rows N] [--send-rows N]
       [--personalised SHARE] [--latency-ms N] [--concurrency N] [--seed N] [--repeat N]
       [--cli dist|src] [--no-build] [--keep] [--json] [--timeout-s N] [--descending]
       [--slow-latency-ms N] [--slow-concurrency N] [--large-rows N]
  --rows         rows of the intake comparison's file (default 100,000)
  --send-rows    rows of the list the nodes send, split into one file a node (default 20,000)
  --personalised share of personalised rows (one request each) in that list (default 0.2)
  --nodes        the node runs go from 1 to N daemons (default 3); --descending: from N to 1
  --slow-latency-ms  the node runs again on PostgreSQL at this latency (default 500; 0: not)
  --slow-concurrency SMSDROP_CONCURRENCY of that series (default 32)
  --large-rows   rows of the large file a node reads while a 100-row file is dropped on another
                 (default 1,000,000)`;

/** True when the arguments ask for this mode (`--database postgres` or `--database=postgres`). */
export function wantsPostgres(argv: string[]): boolean {
  return argv.some(
    (a, i) => a === '--database=postgres' || (a === '--database' && argv[i + 1] === 'postgres'),
  );
}

function whole(name: string, text: string | undefined, fallback: number, min: number): number {
  if (text === undefined) return fallback;
  const n = Number(text.replaceAll('_', ''));
  if (!Number.isInteger(n) || n < min)
    throw new Error(`Expected \`--${name}\` to be a whole number >= ${min}, got \`${text}\``);
  return n;
}

export function parsePostgresOptions(argv: string[]): PostgresBenchOptions {
  const text = { type: 'string' } as const;
  const flag = { type: 'boolean', default: false } as const;
  const { values: v } = parseArgs({
    args: argv,
    options: {
      database: text,
      nodes: text,
      rows: text,
      'send-rows': text,
      personalised: text,
      'latency-ms': text,
      concurrency: text,
      seed: text,
      repeat: text,
      cli: { type: 'string', default: 'dist' },
      'no-build': flag,
      keep: flag,
      json: flag,
      'timeout-s': text,
      descending: flag,
      'large-rows': text,
      'slow-latency-ms': text,
      'slow-concurrency': text,
    },
  });
  if (v.database !== 'postgres')
    throw new Error(`Expected \`--database\` to be postgres, got \`${v.database}\``);
  if (v.cli !== 'dist' && v.cli !== 'src')
    throw new Error(`Expected \`--cli\` to be dist or src, got \`${v.cli}\``);
  const personalised = v.personalised === undefined ? 0.2 : Number(v.personalised);
  if (!(personalised >= 0 && personalised <= 0.99))
    throw new Error(
      `Expected \`--personalised\` to be a share from 0 to 0.99, got \`${v.personalised}\``,
    );
  const nodes = whole('nodes', v.nodes, 3, 1);
  return {
    nodes,
    rows: whole('rows', v.rows, 100_000, 1),
    sendRows: whole('send-rows', v['send-rows'], 20_000, nodes),
    personalised,
    latencyMs: whole('latency-ms', v['latency-ms'], 50, 0),
    concurrency: whole('concurrency', v.concurrency, 8, 1),
    seed: whole('seed', v.seed, 1, 0),
    repeat: whole('repeat', v.repeat, 2, 1),
    cli: v.cli,
    build: v.cli === 'dist' && !v['no-build'],
    keep: v.keep,
    json: v.json,
    timeoutS: whole('timeout-s', v['timeout-s'], 600, 1),
    descending: v.descending,
    largeRows: whole('large-rows', v['large-rows'], 1_000_000, 1),
    slowLatencyMs: whole('slow-latency-ms', v['slow-latency-ms'], 500, 0),
    slowConcurrency: whole('slow-concurrency', v['slow-concurrency'], 32, 1),
  };
}

export interface PostgresBenchResult {
  database: 'postgres';
  intake: { sqlite: IntakeRate; postgres: IntakeRate; postgresToSqlite: number };
  latencyMs: number;
  concurrency: number;
  /** SMSDROP_CONCURRENCY over the latency: the most requests/s the account's slots allow. */
  networkLimitRequestsPerSec: number | null;
  sendRows: number;
  personalised: number;
  /** One node on SQLite (the reference), then 1 to N nodes on PostgreSQL. */
  nodeRuns: NodeRunFigures[];
  /** 1 to N nodes on PostgreSQL again at the slow latency and concurrency (none when 0). */
  slow: { latencyMs: number; concurrency: number; nodeRuns: NodeRunFigures[] } | null;
  smallFileWait: SmallFileWait;
  /** The issue's targets: 1 node on PostgreSQL against SQLite, N nodes against 1, each series. */
  targets: { figure: string; value: number; goal: string; met: boolean | null }[];
  ok: boolean;
  source: { commit: string | null; built: boolean; cli: CliSource };
  machine: { cpus: number; node: string; loadAvgStart: number[]; loadAvgEnd: number[] };
}

type NodeRunFigures = NodesRun & { ofNetworkLimit: number | null };

/** One node on PostgreSQL against one on SQLite, requests/s. */
const AS_SQLITE = 0.9;
/** More nodes against one node, requests/s: more nodes never send less. */
const NOT_LOWER = 0.95;
/** PostgreSQL's intake against SQLite's, rows/s. */
const INTAKE_AS_SQLITE = 0.7;
/** Rows of the small file, and the longest its drop may wait for its first request. */
const SMALL_ROWS = 100;
const SMALL_FILE_START_S = 2;

const note = (text: string) => process.stderr.write(`bench: ${text}\n`);
const round = (x: number, digits = 3) => Number(x.toFixed(digits));

/**
 * 1 to N nodes, or N down to 1 with --descending: the machine's load drifts during a bench, and
 * the other order tells a drift from an effect of the number of nodes.
 */
const nodeCounts = (o: PostgresBenchOptions) => {
  const counts = Array.from({ length: o.nodes }, (_, i) => i + 1);
  return o.descending ? counts.reverse() : counts;
};

/** SMSDROP_CONCURRENCY over the latency, requests/s; none at latency 0. */
const networkLimit = (o: Pick<PostgresBenchOptions, 'latencyMs' | 'concurrency'>) =>
  o.latencyMs > 0 ? (o.concurrency * 1000) / o.latencyMs : null;

/** One run of `nodes` nodes on the database at `databaseUrl`; none: one node on SQLite. */
async function nodeRun(
  o: PostgresBenchOptions,
  workDir: string,
  nodes: number,
  databaseUrl?: string,
): Promise<PostgresBenchResult['nodeRuns'][number]> {
  const journal = databaseUrl ? 'PostgreSQL' : 'SQLite (the reference)';
  note(
    `${nodes} node(s) on ${journal}: ${o.sendRows} rows, ${o.latencyMs} ms, concurrency ${o.concurrency}`,
  );
  const run = await runNodes({
    ...o,
    nodes,
    rows: o.sendRows,
    ...(databaseUrl ? { databaseUrl } : {}),
    workDir: path.join(workDir, `${databaseUrl ? `nodes-${nodes}` : 'sqlite'}-${o.latencyMs}ms`),
    env: childEnv(workDir, BENCH_CREDENTIALS, {}),
    timeoutMs: o.timeoutS * 1000,
  });
  for (const p of run.problems) note(`${nodes} node(s) on ${journal}: ${p}`);
  const limit = networkLimit(o);
  return { ...run, ofNetworkLimit: limit ? round(run.requestsPerSec / limit) : null };
}

/** A small file dropped on node 1 while node 0 reads `--large-rows` (smallFileWait.ts). */
async function smallFileRun(
  o: PostgresBenchOptions,
  workDir: string,
  databaseUrl: string,
): Promise<SmallFileWait> {
  note(`a ${SMALL_ROWS}-row file dropped on node 1 while node 0 reads ${o.largeRows} rows`);
  const wait = await measureSmallFileWait(
    {
      ...o,
      databaseUrl,
      workDir: path.join(workDir, 'small-file'),
      env: childEnv(workDir, BENCH_CREDENTIALS, {}),
      timeoutMs: o.timeoutS * 1000,
    },
    o.largeRows,
    SMALL_ROWS,
  );
  if (wait.secondsToFirstRequest === null)
    note(`the small file had no request after ${o.timeoutS} s`);
  return wait;
}

function intakeTarget(ratio: number): PostgresBenchResult['targets'][number] {
  return {
    figure: "intake rows/s on PostgreSQL over SQLite's",
    value: ratio,
    goal: `>= ${INTAKE_AS_SQLITE}`,
    met: ratio >= INTAKE_AS_SQLITE,
  };
}

function smallFileTarget(w: SmallFileWait): PostgresBenchResult['targets'][number] {
  return {
    figure: `s from a ${w.smallRows}-row file's drop to its first request, another node reading ${w.largeRows} rows`,
    value: w.secondsToFirstRequest ?? Infinity,
    goal: `<= ${SMALL_FILE_START_S}`,
    met: w.secondsToFirstRequest !== null && w.secondsToFirstRequest <= SMALL_FILE_START_S,
  };
}

export async function runPostgresBench(o: PostgresBenchOptions): Promise<PostgresBenchResult> {
  if (!postgresBinDir())
    throw new Error("PostgreSQL's server is not installed (pg_config --bindir has no initdb)");
  const loadAvgStart = os.loadavg().map((x) => round(x, 2));
  const commit = spawnSync('git', ['rev-parse', '--short', 'HEAD'], { encoding: 'utf8' });
  if (o.build) {
    note('npm run build');
    const b = build();
    if (!b.ok) note(`build reported errors (going on with what was emitted):\n${b.output}`);
  }
  const workDir = mkdtempSync(path.join(os.tmpdir(), 'smsdrop-bench-pg-'));
  note('starting a throwaway PostgreSQL');
  const cluster = await startPostgres();
  try {
    const csv = path.join(workDir, 'intake.csv');
    note(`intake: ${o.rows} rows into SQLite and PostgreSQL, best of ${o.repeat} each`);
    await generateCsv(csv, o.rows, o.seed);
    const intake = await measureIntakePair(csv, o.rows, cluster, workDir, o.repeat);
    const limit = networkLimit(o);
    const nodeRuns: PostgresBenchResult['nodeRuns'] = [await nodeRun(o, workDir, 1)];
    for (const nodes of nodeCounts(o))
      nodeRuns.push(await nodeRun(o, workDir, nodes, await cluster.freshDatabase()));
    const slow = o.slowLatencyMs > 0 ? await slowSeries(o, workDir, cluster) : null;
    const smallFileWait = await smallFileRun(o, workDir, await cluster.freshDatabase());
    const postgresToSqlite = round(intake.postgres.rowsPerSec / intake.sqlite.rowsPerSec);
    return {
      database: 'postgres',
      intake: { ...intake, postgresToSqlite },
      latencyMs: o.latencyMs,
      concurrency: o.concurrency,
      networkLimitRequestsPerSec: limit,
      sendRows: o.sendRows,
      personalised: o.personalised,
      nodeRuns,
      slow,
      smallFileWait,
      targets: [
        intakeTarget(postgresToSqlite),
        ...targetsOf(nodeRuns, o.latencyMs),
        ...targetsOf(slow?.nodeRuns ?? [], o.slowLatencyMs),
        smallFileTarget(smallFileWait),
      ],
      ok:
        [...nodeRuns, ...(slow?.nodeRuns ?? [])].every((r) => r.ok) &&
        smallFileWait.secondsToFirstRequest !== null,
      source: {
        commit: commit.status === 0 ? commit.stdout.trim() : null,
        built: o.build,
        cli: o.cli,
      },
      machine: {
        cpus: os.cpus().length,
        node: process.version,
        loadAvgStart,
        loadAvgEnd: os.loadavg().map((x) => round(x, 2)),
      },
    };
  } finally {
    await cluster.stop();
    if (o.keep) note(`kept ${workDir}`);
    else rmSync(workDir, { recursive: true, force: true });
  }
}

const BENCH_CREDENTIALS = {
  accountSid: 'ACbench0000000000000000000000001',
  authToken: 'benchtoken000000000000000000001',
  appId: 'APPbench000000000000000000000001',
};

/** The node runs again at the slow latency and concurrency, PostgreSQL only. */
async function slowSeries(
  o: PostgresBenchOptions,
  workDir: string,
  cluster: { freshDatabase(): Promise<string> },
): Promise<NonNullable<PostgresBenchResult['slow']>> {
  const slow = { ...o, latencyMs: o.slowLatencyMs, concurrency: o.slowConcurrency };
  const nodeRuns: NodeRunFigures[] = [];
  for (const nodes of nodeCounts(o))
    nodeRuns.push(await nodeRun(slow, workDir, nodes, await cluster.freshDatabase()));
  return { latencyMs: slow.latencyMs, concurrency: slow.concurrency, nodeRuns };
}

const ratio = (a: number, b: number) => (b > 0 ? round(a / b) : 0);

/** One node on PostgreSQL against SQLite (when it ran), and each N nodes against one. */
function targetsOf(runs: NodeRunFigures[], latencyMs: number): PostgresBenchResult['targets'] {
  const pgRuns = runs.filter((r) => r.journal === 'postgres');
  const one = pgRuns.find((r) => r.nodes === 1);
  const sqlite = runs.find((r) => r.journal === 'sqlite');
  if (!one) return [];
  const targets: PostgresBenchResult['targets'] = [];
  if (sqlite) {
    const value = ratio(one.requestsPerSec, sqlite.requestsPerSec);
    targets.push({
      figure: `requests/s of 1 node on PostgreSQL over SQLite's, ${latencyMs} ms`,
      value,
      goal: `>= ${AS_SQLITE}`,
      met: value >= AS_SQLITE,
    });
  }
  for (const r of pgRuns.filter((run) => run !== one)) {
    const value = ratio(r.requestsPerSec, one.requestsPerSec);
    targets.push({
      figure: `requests/s of ${r.nodes} nodes over 1 node's, ${latencyMs} ms`,
      value,
      goal: `>= ${NOT_LOWER}`,
      met: value >= NOT_LOWER,
    });
  }
  return targets;
}

const n = (x: number) => Math.round(x).toLocaleString('en-US');
const load = (l: [number, number]) => `${l[0].toFixed(2)} -> ${l[1].toFixed(2)}`;

function nodesTable(runs: NodeRunFigures[]): string {
  const nodes = new Table({
    head: [
      'journal',
      'nodes',
      'requests/s',
      'of limit',
      'peak in flight',
      'requests',
      'ms a request',
      'sending s',
      'drop to done s',
      'load (1 min)',
      'ok',
    ],
    ...plain,
  });
  for (const run of runs)
    nodes.push([
      run.journal,
      run.nodes,
      run.requestsPerSec.toFixed(1),
      run.ofNetworkLimit?.toFixed(3) ?? '-',
      run.peakInFlight ?? '?',
      `${n(run.requests)} (expected ${n(run.expectedRequests)})`,
      run.meanRequestMs.toFixed(1),
      run.sendingSeconds.toFixed(2),
      run.e2eSeconds.toFixed(2),
      load(run.load),
      run.ok ? 'yes' : `NO: ${run.problems.join('; ')}`,
    ]);
  return nodes.toString();
}

export function printPostgresTable(r: PostgresBenchResult): void {
  const intake = new Table({
    head: ['journal', 'rows/s', 'best s', 'runs s', 'load (1 min)'],
    ...plain,
  });
  for (const [journal, rate] of Object.entries({
    sqlite: r.intake.sqlite,
    postgres: r.intake.postgres,
  }))
    intake.push([
      journal,
      n(rate.rowsPerSec),
      rate.bestSeconds.toFixed(2),
      rate.runsSeconds.join(', '),
      load(rate.load),
    ]);
  const targets = new Table({ head: ['target', 'value', 'goal', 'met'], ...plain });
  for (const t of r.targets)
    targets.push([
      t.figure,
      String(t.value),
      t.goal,
      t.met === null ? 'n/a' : t.met ? 'pass' : 'FAIL',
    ]);
  const limit = r.networkLimitRequestsPerSec;
  const lines = [
    `intake of ${n(r.intake.sqlite.rows)} rows through the ports (no sending), best of ${r.intake.sqlite.runsSeconds.length}: PostgreSQL at ${r.intake.postgresToSqlite} of SQLite's rows/s`,
    intake.toString(),
    `nodes: \`smsdrop run\` daemons on one PostgreSQL, ${n(r.sendRows)} rows (${Math.round(r.personalised * 100)}% personalised) split into one file a node, latency ${r.latencyMs} ms, SMSDROP_CONCURRENCY=${r.concurrency} on every node${limit ? ` (network limit ${limit.toFixed(1)} requests/s)` : ''}`,
    nodesTable(r.nodeRuns),
    ...(r.slow
      ? [
          `the same on PostgreSQL at latency ${r.slow.latencyMs} ms, SMSDROP_CONCURRENCY=${r.slow.concurrency} (network limit ${networkLimit(r.slow)?.toFixed(1)} requests/s)`,
          nodesTable(r.slow.nodeRuns),
        ]
      : []),
    `small file: ${r.smallFileWait.smallRows} rows dropped on a node while another read ${n(r.smallFileWait.largeRows)} rows (${n(r.smallFileWait.largeRowsAtDrop)} of them in the journal at the drop): first request ${r.smallFileWait.secondsToFirstRequest ?? '(none)'} s after the drop, the large file ${r.smallFileWait.largeStillReading ? 'still' : 'no longer'} being read then, load ${load(r.smallFileWait.load)}`,
    ...(r.targets.length ? [targets.toString()] : []),
    `code: commit ${r.source.commit ?? '?'}, CLI from ${r.source.cli}${r.source.cli === 'dist' && !r.source.built ? ' (dist/ not rebuilt by this run)' : ''}`,
    `machine: ${r.machine.cpus} CPUs, Node ${r.machine.node}, load ${r.machine.loadAvgStart.join(' ')} -> ${r.machine.loadAvgEnd.join(' ')}; shared machine: the figures are rough`,
  ];
  process.stdout.write(`${lines.join('\n')}\n`);
}

// No colours: the tables are pasted into docs.
const plain = { style: { head: [], border: [] } };

/** The mode's command line: figures on stdout (a table or one JSON object); 1 if a run is wrong. */
export async function postgresMain(argv: string[]): Promise<void> {
  let options: PostgresBenchOptions;
  try {
    options = parsePostgresOptions(argv);
  } catch (err) {
    process.stderr.write(`bench: ${(err as Error).message}\n${POSTGRES_USAGE}\n`);
    process.exit(2);
  }
  // A signal ends the process through its exit handlers: track()'s kill the nodes and the
  // simulator, and PostgreSQL gets its parent-death signal.
  for (const signal of ['SIGINT', 'SIGTERM'] as const)
    process.once(signal, () => process.exit(130));
  const result = await runPostgresBench(options);
  if (options.json) process.stdout.write(`${JSON.stringify(result)}\n`);
  else printPostgresTable(result);
  process.exit(result.ok ? 0 : 1);
}
