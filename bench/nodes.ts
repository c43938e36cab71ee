// Requests/s of N `smsdrop run` daemons (nodes) on one PostgreSQL journal, against one simulator
// process with a latency, every node with the same SMSDROP_CONCURRENCY: the account's slots hold
// it across the nodes, so the simulator should never see more requests at once than that.
//
// A list of `rows` rows is split into N files that share no number (generate.ts's `first`), and
// file i is dropped into node i's inbox: a node sends the files it read (a file's batches are
// claimed by the node reading it; docs/postgres.md), so N nodes need N files to share the work.
// The same list sent by one node on its own SQLite journal is the reference.
// Timed: from the first request's start to the last answer (the journal's attempts, written by
// every node on one machine's clock), and from the drop until every file is in its node's done/.
import { SQLITE_DIALECT } from '../src/journal/rules.js';
import type { ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, renameSync, copyFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import pg from 'pg';
import Database from '../src/journal/sqlite.js';
import { type CsvMix, generateCsv, SIMULATOR_TEMPLATES } from './generate.js';
import {
  cliArgs,
  type CliSource,
  exited,
  type SimulatorCounts,
  spawnNode,
  startSimulatorProcess,
} from './processes.js';

export interface NodesSettings {
  nodes: number;
  rows: number;
  personalised: number;
  seed: number;
  latencyMs: number;
  concurrency: number;
  cli: CliSource;
  /** The PostgreSQL journal; none: one node on its own SQLite journal (the reference). */
  databaseUrl?: string;
  workDir: string;
  /** The children's environment (credentials, an empty config), without the node's own settings. */
  env: NodeJS.ProcessEnv;
  /** Longest wait for every file to be done. */
  timeoutMs: number;
}

export interface NodesRun {
  journal: 'postgres' | 'sqlite';
  nodes: number;
  rows: number;
  /** Requests in the journal (attempts), every node's. */
  requests: number;
  expectedRequests: number;
  /** First request's start to last answer. */
  sendingSeconds: number;
  requestsPerSec: number;
  /**
   * Mean of each attempt's started_at to finished_at, ms: from its write to its answer's write
   * (the latency and the journal's turns).
   */
  meanRequestMs: number;
  /** Drop to the last file in its node's done/. */
  e2eSeconds: number;
  /** The simulator's own count: requests that reached it, and the most at once. */
  simulatorRequests: number | null;
  peakInFlight: number | null;
  accepted: number;
  expectedAccepted: number;
  /** Every file done, accepted and requests as the generator says, and never above concurrency. */
  ok: boolean;
  problems: string[];
  /** Load average (1 min) at the drop and at the end. */
  load: [number, number];
}

const READY_TIMEOUT_MS = 120_000;
const STOP_TIMEOUT_MS = 30_000;

export interface Daemon {
  child: ChildProcess;
  output(): string;
}

/** `smsdrop run` for node i; it dies with the benchmark, however that ends (spawnNode). */
export function startNode(s: NodesSettings, node: number): Daemon {
  const env: NodeJS.ProcessEnv = {
    ...s.env,
    SMSDROP_DATA_DIR: dataDirOf(s, node),
    ...(s.databaseUrl ? { SMSDROP_DATABASE_URL: s.databaseUrl } : {}),
    SMSDROP_NODE_ID: `bench-node-${node}`,
    SMSDROP_CONCURRENCY: String(s.concurrency),
    SMSDROP_STABILITY_MS: '300',
    SMSDROP_LOG_LEVEL: 'info',
    SMSDROP_HTTP: 'off',
  };
  const child = spawnNode([...cliArgs(s.cli), 'run'], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  let text = '';
  const keep = (d: Buffer) => (text = (text + d.toString()).slice(-8000));
  child.stdout!.on('data', keep);
  child.stderr!.on('data', keep);
  return { child, output: () => text };
}

export const dataDirOf = (s: NodesSettings, node: number) => path.join(s.workDir, `node-${node}`);
const fileName = (s: NodesSettings, node: number) => `nodes${s.nodes}-part${node}.csv`;

export async function waitUntilWatching(d: Daemon, node: number): Promise<void> {
  const deadline = Date.now() + READY_TIMEOUT_MS;
  while (!/watching \S*inbox/.test(d.output())) {
    if (d.child.exitCode !== null || d.child.signalCode !== null)
      throw new Error(`node ${node} exited before watching its inbox:\n${d.output()}`);
    if (Date.now() > deadline) throw new Error(`node ${node} not watching its inbox in time`);
    await sleep(50);
  }
}

/** The list split into one file a node, sharing no number; their mixes. */
async function generateParts(s: NodesSettings): Promise<CsvMix[]> {
  const mixes: CsvMix[] = [];
  const per = Math.floor(s.rows / s.nodes);
  for (let node = 0; node < s.nodes; node++) {
    const rows = node === s.nodes - 1 ? s.rows - per * (s.nodes - 1) : per;
    const file = path.join(s.workDir, fileName(s, node));
    mixes.push(await generateCsv(file, rows, s.seed + node, s.personalised, per * node));
  }
  return mixes;
}

/** Copied in as NAME.part (ignored by the watcher), then renamed: the file appears whole. */
function dropInto(s: NodesSettings, node: number): void {
  const inbox = path.join(dataDirOf(s, node), 'inbox');
  const name = fileName(s, node);
  copyFileSync(path.join(s.workDir, name), path.join(inbox, `${name}.part`));
  renameSync(path.join(inbox, `${name}.part`), path.join(inbox, name));
}

/** Resolves once every node's file is in its done/; a problem otherwise. */
async function waitUntilDone(s: NodesSettings, daemons: Daemon[]): Promise<string[]> {
  const deadline = Date.now() + s.timeoutMs;
  const where = (node: number, folder: string) =>
    existsSync(path.join(dataDirOf(s, node), folder, fileName(s, node)));
  for (;;) {
    const problems: string[] = [];
    let done = 0;
    for (let node = 0; node < s.nodes; node++) {
      if (where(node, 'done')) done++;
      else if (where(node, 'failed')) problems.push(`node ${node}: its file went to failed/`);
      const c = daemons[node]!.child;
      if (c.exitCode !== null || c.signalCode !== null)
        problems.push(
          `node ${node} exited (${c.exitCode ?? c.signalCode}): ${lastLines(daemons[node]!)}`,
        );
    }
    if (problems.length > 0 || done === s.nodes) return problems;
    if (Date.now() > deadline) return [`not every file done after ${s.timeoutMs / 1000} s`];
    await sleep(100);
  }
}

const lastLines = (d: Daemon) => d.output().trim().split('\n').slice(-5).join(' | ');

export async function stopNodes(daemons: Daemon[]): Promise<void> {
  await Promise.all(
    daemons.map(async ({ child }) => {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), STOP_TIMEOUT_MS);
      await exited(child);
      clearTimeout(timer);
    }),
  );
}

interface JournalFigures {
  requests: number;
  sendingSeconds: number;
  meanRequestMs: number;
  accepted: number;
  notDone: number;
  files: number;
}

/** What the journal says: requests, their span and mean time, and the files' counts. */
async function pgFigures(url: string): Promise<JournalFigures> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const a = await client.query<Record<'n' | 'first' | 'last' | 'mean', string | null>>(
      `SELECT count(*) AS n, min(started_at) AS first, max(finished_at) AS last,
         avg(extract(epoch FROM finished_at::timestamptz - started_at::timestamptz)) * 1000 AS mean
       FROM attempts`,
    );
    const f = await client.query<{ status: string; accepted: string; pending: string }>(
      'SELECT status, accepted, pending FROM v_files',
    );
    return figuresOf(a.rows[0]!, f.rows);
  } finally {
    await client.end();
  }
}

function sqliteFigures(journalFile: string): JournalFigures {
  const db = new Database(journalFile, { readonly: true, fileMustExist: true });
  try {
    const a = db
      .prepare(
        `SELECT count(*) AS n, ${SQLITE_DIALECT.timeText('min(started_at)')} AS first,
           ${SQLITE_DIALECT.timeText('max(finished_at)')} AS last,
           avg(finished_at - started_at) AS mean
         FROM attempts`,
      )
      .get() as Record<'n' | 'first' | 'last' | 'mean', string | number | null>;
    const f = db.prepare('SELECT status, accepted, pending FROM v_files').all() as {
      status: string;
      accepted: number;
      pending: number;
    }[];
    return figuresOf(a, f);
  } finally {
    db.close();
  }
}

function figuresOf(
  a: Record<'n' | 'first' | 'last' | 'mean', string | number | null>,
  files: { status: string; accepted: string | number; pending: string | number }[],
): JournalFigures {
  const { first, last } = a;
  return {
    requests: Number(a.n),
    sendingSeconds:
      first && last ? (Date.parse(String(last)) - Date.parse(String(first))) / 1000 : 0,
    meanRequestMs: Number(a.mean ?? 0),
    accepted: files.reduce((sum, r) => sum + Number(r.accepted), 0),
    notDone: files.filter((r) => r.status !== 'done' || Number(r.pending) > 0).length,
    files: files.length,
  };
}

/** One run of `s.nodes` nodes on a fresh database and a fresh simulator. */
export async function runNodes(s: NodesSettings): Promise<NodesRun> {
  mkdirSync(s.workDir, { recursive: true });
  const mixes = await generateParts(s);
  const sim = await startSimulatorProcess(s.cli, s.env, s.latencyMs, SIMULATOR_TEMPLATES);
  const daemons: Daemon[] = [];
  let counts: SimulatorCounts | undefined;
  let run: Omit<NodesRun, 'simulatorRequests' | 'peakInFlight' | 'ok'>;
  try {
    const settings = { ...s, env: { ...s.env, SMSDROP_BASE_URL: sim.url } };
    for (let node = 0; node < s.nodes; node++) daemons.push(startNode(settings, node));
    await Promise.all(daemons.map((d, node) => waitUntilWatching(d, node)));
    const loadAtDrop = os.loadavg()[0]!;
    const dropped = performance.now();
    for (let node = 0; node < s.nodes; node++) dropInto(s, node);
    const problems = await waitUntilDone(s, daemons);
    const e2eSeconds = (performance.now() - dropped) / 1000;
    const j = s.databaseUrl
      ? await pgFigures(s.databaseUrl)
      : sqliteFigures(path.join(dataDirOf(s, 0), 'journal.sqlite'));
    if (j.notDone > 0 || j.files !== s.nodes)
      problems.push(
        `${j.notDone} of ${j.files} files not done in the journal (${s.nodes} dropped)`,
      );
    run = {
      journal: s.databaseUrl ? 'postgres' : 'sqlite',
      nodes: s.nodes,
      rows: s.rows,
      requests: j.requests,
      expectedRequests: mixes.reduce((sum, m) => sum + m.expectedRequests, 0),
      sendingSeconds: round(j.sendingSeconds),
      requestsPerSec: j.sendingSeconds > 0 ? round(j.requests / j.sendingSeconds, 1) : 0,
      meanRequestMs: round(j.meanRequestMs, 1),
      e2eSeconds: round(e2eSeconds),
      accepted: j.accepted,
      expectedAccepted: mixes.reduce((sum, m) => sum + m.expectedAccepted, 0),
      problems,
      load: [round(loadAtDrop, 2), round(os.loadavg()[0]!, 2)],
    };
  } finally {
    await stopNodes(daemons);
    counts = await sim.stop();
  }
  return judge(s, run, counts);
}

function judge(
  s: NodesSettings,
  run: Omit<NodesRun, 'simulatorRequests' | 'peakInFlight' | 'ok'>,
  counts: SimulatorCounts | undefined,
): NodesRun {
  const problems = [...run.problems];
  if (run.accepted !== run.expectedAccepted)
    problems.push(`${run.accepted} numbers accepted, the files hold ${run.expectedAccepted}`);
  if (run.requests !== run.expectedRequests)
    problems.push(`${run.requests} requests, the files make ${run.expectedRequests}`);
  if (!counts) problems.push('the simulator did not say its counts');
  else if (counts.peakInFlight > s.concurrency)
    problems.push(
      `${counts.peakInFlight} requests at once at the simulator, above SMSDROP_CONCURRENCY=${s.concurrency}`,
    );
  return {
    ...run,
    simulatorRequests: counts?.requests ?? null,
    peakInFlight: counts?.peakInFlight ?? null,
    ok: problems.length === 0,
    problems,
  };
}

const round = (x: number, digits = 3) => Number(x.toFixed(digits));
