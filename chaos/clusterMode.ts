// Cluster mode: N daemons (`smsdrop run`) on one PostgreSQL journal, each with a data directory of
// its own. A round's files are dropped into different nodes' inboxes, and one of them again, same
// bytes, into another node's once the first copy was taken (the same export dropped on two
// servers). Any node is killed at random moments (SIGKILL mostly, SIGTERM now and then) and
// started again at once; PostgreSQL itself crashes and restarts once, midway. Then every node runs
// without kills until every inbox and processing/ is empty, they are stopped, and the rows left
// unknown are resent. Judged as the other modes (chaos.ts), plus each node's folders, and the
// account's concurrency across nodes: the simulator's most requests at once. With --pauses and
// --partitions, nodes are also stopped dead and cut off from PostgreSQL or the provider beside the
// kills (chaos/clusterFaults.ts); each node then reaches both through relays of its own.
import { appendFileSync, existsSync, mkdirSync, renameSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { type JournalFile, pgJournalFiles } from './check.js';
import { inputCsvs } from './daemonMode.js';
import { controlDuringLife, controlWhileFinishing, resumePaused } from './control.js';
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
import { type CliProcess, killAfter, logProcess, PROVIDER_STALL_MS, startCli } from './procs.js';
import { FaultRunner, planFaults } from './clusterFaults.js';
import { type Relay, startRelay } from './relay.js';

export interface ClusterSettings extends ModeSettings {
  nodes: number;
  databaseUrl: string;
  /** Crashes PostgreSQL (immediate shutdown) and starts it again. */
  restartDatabase(): Promise<void>;
  /** Every node's SMSDROP_CONCURRENCY: the account's limit across them. */
  concurrency: number;
  /** Nodes stopped (SIGSTOP) for longer than their lease, then let go on. */
  pauses: number;
  /** Nodes cut off from PostgreSQL (or, one in three, from the provider) for several leases. */
  partitions: number;
  /** Each node's relays to PostgreSQL and the provider (set by runClusterMode when it cuts). */
  relays?: NodeRelays[];
}

export interface NodeRelays {
  postgres: Relay;
  provider: Relay;
}

/** A node's lease: short, so that a killed node's batches are taken over within the run. */
const LEASE = '3s';
const LEASE_MS = 3_000;

export interface ClusterRun extends ModeRun {
  /** Copies dropped into each node's inbox. */
  dropsByNode: number[];
}

export function nodeDataDir(s: ClusterSettings, node: number): string {
  return path.join(s.dir, `node-${node}`);
}

function folder(s: ClusterSettings, node: number, name: string): string {
  return path.join(nodeDataDir(s, node), name);
}

/** A node's environment: through its own relays when the run has them. */
export function nodeEnv(s: ClusterSettings, node: number): NodeJS.ProcessEnv {
  const relays = s.relays?.[node];
  const env = directEnv(s, nodeDataDir(s, node));
  if (!relays) return env;
  const url = new URL(s.databaseUrl);
  url.port = String(relays.postgres.port);
  return {
    ...env,
    SMSDROP_DATABASE_URL: url.toString(),
    SMSDROP_BASE_URL: `http://127.0.0.1:${relays.provider.port}`,
  };
}

function directEnv(s: ClusterSettings, dataDir: string): NodeJS.ProcessEnv {
  return {
    ...smsdropEnv(s),
    SMSDROP_DATA_DIR: dataDir,
    SMSDROP_DATABASE_URL: s.databaseUrl,
    SMSDROP_LEASE: LEASE,
    SMSDROP_CONCURRENCY: String(s.concurrency),
    // the provider's stall and a margin: a request with no answer keeps its slot that long
    SMSDROP_PROVIDER_HOLD_MS: String(PROVIDER_STALL_MS + 500),
  };
}

/**
 * An operator's CLI on a server of its own (no daemon there, no relay: never cut off): control
 * commands and the retries at the end go through it, and a `resume` it runs sends in the
 * foreground, one more sender of the cluster.
 */
function operatorEnv(s: ClusterSettings): NodeJS.ProcessEnv {
  return directEnv(s, path.join(s.dir, 'operator'));
}

/** Each node's relays: to PostgreSQL, and to the provider (which drops what its node gave up). */
async function startRelays(s: ClusterSettings): Promise<NodeRelays[]> {
  const db = new URL(s.databaseUrl);
  const provider = new URL(s.simulatorUrl);
  const relays: NodeRelays[] = [];
  for (let node = 0; node < s.nodes; node++)
    relays.push({
      postgres: await startRelay({ host: db.hostname, port: Number(db.port) }),
      provider: await startRelay({
        host: provider.hostname,
        port: Number(provider.port),
        dropClosedWhileHeld: true,
      }),
    });
  return relays;
}

function startNode(s: ClusterSettings, run: ClusterRun, node: number): CliProcess {
  mkdirSync(folder(s, node, 'inbox'), { recursive: true, mode: 0o700 }); // as smsdrop makes it
  run.starts++;
  return startCli(['run'], nodeEnv(s, node), reportDirOf(s));
}

function allFiled(s: ClusterSettings): boolean {
  for (let node = 0; node < s.nodes; node++)
    for (const where of ['inbox', 'processing'])
      if (inputCsvs(folder(s, node, where)).length > 0) return false;
  return true;
}

/** Written as NAME.part, then renamed (atomic); false while a copy of that name waits there. */
function dropInto(s: ClusterSettings, run: ClusterRun, node: number, f: ChaosFile): boolean {
  const inbox = folder(s, node, 'inbox');
  if (existsSync(path.join(inbox, f.name))) return false;
  writeFileSync(path.join(inbox, `${f.name}.part`), f.bytes);
  renameSync(path.join(inbox, `${f.name}.part`), path.join(inbox, f.name));
  run.drops++;
  run.dropsByNode[node]!++;
  return true;
}

/** A copy to drop into `node` once the first copy has left `after`'s inbox. */
interface Redrop {
  file: ChaosFile;
  after: number;
  node: number;
}

/** A new round: file j into node j mod N; the second file again into the next node later. */
function dropRound(s: ClusterSettings, run: ClusterRun): Redrop[] {
  const files = addRound(s, run, path.join(s.dir, 'files'));
  files.forEach((f, j) => dropInto(s, run, j % s.nodes, f));
  const second = files[1]!;
  return [{ file: second, after: 1 % s.nodes, node: 2 % s.nodes }];
}

/** Drops the copies whose first copy has been taken; returns those still waiting. */
function redrop(s: ClusterSettings, run: ClusterRun, waiting: Redrop[]): Redrop[] {
  return waiting.filter((r) => {
    if (existsSync(path.join(folder(s, r.after, 'inbox'), r.file.name))) return true;
    if (!dropInto(s, run, r.node, r.file)) return true;
    run.notes.push(
      `${r.file.name} dropped again into node ${r.node} (first read by node ${r.after})`,
    );
    return false;
  });
}

export async function runClusterMode(settings: ClusterSettings): Promise<ClusterRun> {
  const relays = settings.partitions > 0 ? await startRelays(settings) : undefined;
  const s: ClusterSettings = { ...settings, ...(relays ? { relays } : {}) };
  try {
    return await runCluster(s);
  } finally {
    for (const relay of relays ?? [])
      await Promise.all([relay.postgres.close(), relay.provider.close()]);
  }
}

async function runCluster(s: ClusterSettings): Promise<ClusterRun> {
  const run: ClusterRun = { ...newRun(), dropsByNode: Array.from({ length: s.nodes }, () => 0) };
  const procs = Array.from({ length: s.nodes }, (_, node) => startNode(s, run, node));
  const faults = new FaultRunner(planFaults({ ...s, leaseMs: LEASE_MS }), {
    process: (node) => procs[node]!,
    relay: (node, to) => s.relays![node]![to],
    log: (line) => {
      run.notes.push(line);
      appendFileSync(logFileOf(s), `=== ${new Date().toISOString()} ${line}\n`);
    },
  });
  let waiting: Redrop[] = [];
  let restarted = false;
  const kills = () => run.kills.sigkill + run.kills.sigterm;
  for (
    let lives = 0;
    (kills() < s.kills || faults.left > 0) && lives < (s.kills + 1) * 3;
    lives++
  ) {
    if (waiting.length === 0 && allFiled(s)) waiting = dropRound(s, run);
    waiting = redrop(s, run, waiting);
    faults.startDue(kills());
    if (!restarted && kills() >= Math.floor(s.kills / 2)) {
      restarted = true;
      await s.restartDatabase();
      run.notes.push(`PostgreSQL crashed and restarted after ${kills()} kills`);
    }
    const node = Math.floor(s.random() * s.nodes);
    await faults.clear(node); // a stopped or cut-off node is not killed: its return is the test
    if (kills() >= s.kills) await sleep(s.killWindowMs[1]);
    else await oneLife(s, run, procs, node);
  }
  await faults.finish();
  run.nodeFaults = faults.counts;
  if (s.control)
    await resumePaused(s, run, run.control, operatorEnv(s), await pgJournalFiles(s.databaseUrl));
  await runUntilFiled(s, run, procs, waiting);
  await retryLeftovers(s, run, {
    env: directEnv(s, nodeDataDir(s, 0)),
    files: () => pgJournalFiles(s.databaseUrl),
  });
  return run;
}

/** One node killed at a random moment (control commands meanwhile) and started again. */
async function oneLife(
  s: ClusterSettings,
  run: ClusterRun,
  procs: CliProcess[],
  node: number,
): Promise<void> {
  await Promise.all([
    killOne(s, run, procs[node]!, node),
    s.control
      ? controlDuringLife(s, run, operatorEnv(s), s.killWindowMs[1], () =>
          pgJournalFiles(s.databaseUrl),
        )
      : undefined,
  ]);
  procs[node] = startNode(s, run, node);
}

async function killOne(
  s: ClusterSettings,
  run: ClusterRun,
  proc: CliProcess,
  node: number,
): Promise<void> {
  const { delayMs, signal } = planKill(s);
  const result = await killAfter(proc, delayMs, signal, STOP_TIMEOUT_MS);
  const title = `node ${node} run${result.delivered ? ` (${signal} after ${delayMs} ms)` : ''}`;
  logProcess(logFileOf(s), title, proc, result.exit);
  if (!result.delivered) {
    run.problems.push(
      `${title}: the daemon exited by itself (${result.exit.code ?? result.exit.signal}): ${lastLine(proc.output())}`,
    );
    return;
  }
  countKill(run, signal);
  if (result.stuck)
    run.problems.push(`${title}: still running ${STOP_TIMEOUT_MS} ms after SIGTERM`);
}

/** Every node without kills (the copies still to drop dropped) until all is filed; then stopped. */
async function runUntilFiled(
  s: ClusterSettings,
  run: ClusterRun,
  procs: CliProcess[],
  waiting: Redrop[],
): Promise<void> {
  const deadline = Date.now() + s.finishTimeoutMs;
  let settled = false;
  let controlled = !s.control;
  const controlling = s.control
    ? controlWhileFinishing(
        s,
        run,
        operatorEnv(s),
        () => pgJournalFiles(s.databaseUrl),
        () => Date.now() > deadline || (waiting.length === 0 && allFiled(s)),
      ).finally(() => (controlled = true))
    : undefined;
  while (Date.now() < deadline) {
    waiting = redrop(s, run, waiting);
    procs.forEach((proc, node) => {
      if (proc.alive()) return;
      run.problems.push(`node ${node}: exited by itself: ${lastLine(proc.output())}`);
      procs[node] = startNode(s, run, node);
    });
    if (waiting.length === 0 && allFiled(s) && controlled) {
      settled = true;
      break;
    }
    await sleep(100);
  }
  await controlling;
  if (!settled)
    run.problems.push(`files still in an inbox or processing/ after ${s.finishTimeoutMs} ms`);
  await Promise.all(
    procs.map(async (proc, node) => {
      const result = await killAfter(proc, 0, 'SIGTERM', STOP_TIMEOUT_MS);
      logProcess(logFileOf(s), `node ${node} run (to the end)`, proc, result.exit);
      if (result.stuck) run.problems.push(`node ${node}: still running after SIGTERM`);
    }),
  );
}

/** Each node's folders: every copy dropped into it in its done/, nothing left, nothing failed. */
export function checkNodeFolders(s: ClusterSettings, run: ClusterRun): string[] {
  const problems: string[] = [];
  for (let node = 0; node < s.nodes; node++) {
    for (const where of ['inbox', 'processing', 'failed'])
      for (const name of inputCsvs(folder(s, node, where)))
        problems.push(`node ${node}: ${where}/${name} is there`);
    const done = inputCsvs(folder(s, node, 'done')).length;
    if (done !== run.dropsByNode[node])
      problems.push(
        `node ${node}: done/ holds ${done} input files, ${run.dropsByNode[node]} were dropped into it`,
      );
  }
  return problems;
}

/** What the journal says of the files at the end (PostgreSQL's v_files). */
export function clusterJournal(s: ClusterSettings): Promise<JournalFile[]> {
  return pgJournalFiles(s.databaseUrl);
}
