// `npm run chaos -- [--kills N] [--mode send|daemon|both] [--seed S] ...`: smsdrop against the
// simulator with faults on, killed N times at random moments, then let finish and judged from the
// simulator's record: every expected (message, number) delivered exactly once, every file done
// with its six statuses adding up to its rows, nothing left pending or unknown. Prints the figures
// (kills, faults, requests, deliveries, duplicates, missing); exit 0 only when all of that holds,
// 1 when something failed (said what), 2 on a usage error. `runChaos` is the same, for the tests.
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { sameProviderDay } from '../src/send/policy.js';
import { seededRandom } from '../src/simulator/faults.js';
import { readRecordFile } from '../src/simulator/record.js';
import { type JournalFile, journalFiles, cancelledBatches, pgCancelledBatches } from './check.js';
import { checkFolders, runDaemonMode } from './daemonMode.js';
import type { CancelledBatch } from './control.js';
import { type Scale, SIMULATOR_TEMPLATES } from './files.js';
import { dataDirOf, type Mode, type ModeRun, type ModeSettings, reportDirOf } from './mode.js';
import { startSimulatorProcess, writeEmptyConfig } from './procs.js';
import { runSendMode } from './sendMode.js';
import {
  type ClusterSettings,
  checkNodeFolders,
  clusterJournal,
  runClusterMode,
} from './clusterMode.js';
import { postgresBinDir, startPostgres } from '../test/pg/cluster.js';
import { spawnSync } from 'node:child_process';
import { type ChaosOptions, parseChaosArgs, USAGE, UsageError } from './args.js';
import { type ChaosFigures, formatFigures, judge, type ModeFigures } from './verdict.js';

export { type ChaosOptions, DEFAULT_FAULTS, parseChaosArgs, USAGE } from './args.js';
export { type ChaosFigures, countFaults, formatFigures, type ModeFigures } from './verdict.js';

const APP_IDS: Record<Mode, string> = {
  send: 'APPchaossend00000000000000000001',
  daemon: 'APPchaosdaemon000000000000000001',
  cluster: 'APPchaoscluster00000000000000001',
};

/** Cluster mode: every node's SMSDROP_CONCURRENCY, the account's limit across them. */
const CLUSTER_CONCURRENCY = 4;

/** Longest a mode is expected to take, to keep it clear of the provider's day change. */
const MODE_SPAN_MS: Record<Scale, number> = { full: 20 * 60_000, small: 3 * 60_000 };

export async function runChaos(options: ChaosOptions): Promise<ChaosFigures> {
  const started = Date.now();
  const dir = mkdtempSync(path.join(os.tmpdir(), 'smsdrop-chaos-'));
  const modes: Mode[] = options.mode === 'both' ? ['send', 'daemon'] : [options.mode];
  const figures: ModeFigures[] = [];
  for (const mode of modes) figures.push(await runMode(mode, options, dir));
  const ok = figures.every((f) => f.failures.length === 0);
  const kept = !ok || options.keep;
  if (!kept) rmSync(dir, { recursive: true, force: true });
  return {
    ok,
    seed: options.seed,
    scale: options.scale,
    faultSpec: options.faults,
    modes: figures,
    elapsedMs: Date.now() - started,
    dir,
    kept,
    replay: replayCommand(options),
  };
}

function replayCommand(o: ChaosOptions): string {
  const nodes =
    o.mode === 'cluster'
      ? ` --nodes ${o.nodes ?? 3} --pauses ${o.pauses ?? 0} --partitions ${o.partitions ?? 0}`
      : '';
  const control = o.control ? ' --control' : '';
  return `npm run chaos -- --kills ${o.kills} --mode ${o.mode}${nodes}${control} --seed ${o.seed} --scale ${o.scale} --faults '${o.faults}' --kill-window ${o.killWindowMs.join('-')}`;
}

/** Waits (saying so) while the provider's day would change during the next `spanMs`. */
async function clearOfDayChange(spanMs: number, log: (line: string) => void): Promise<void> {
  let said = false;
  while (!sameProviderDay(new Date(), new Date(Date.now() + spanMs))) {
    if (!said)
      log(`waiting for the provider's day change to pass (reqIds are remembered for one day)`);
    said = true;
    await sleep(5_000);
  }
}

async function runMode(mode: Mode, o: ChaosOptions, root: string): Promise<ModeFigures> {
  const log = o.log ?? (() => {});
  await clearOfDayChange(MODE_SPAN_MS[o.scale], log);
  const started = Date.now();
  const dir = path.join(root, mode);
  mkdirSync(dir, { recursive: true });
  const simulatorSeed = (o.seed + { send: 0, daemon: 1, cluster: 2 }[mode]) >>> 0;
  const simulator = await startSimulatorProcess({
    dir,
    appIds: [APP_IDS[mode]],
    templates: SIMULATOR_TEMPLATES,
    faults: o.faults,
    seed: simulatorSeed,
  });
  const settings: ModeSettings = {
    mode,
    dir,
    kills: o.kills,
    seed: o.seed,
    scale: o.scale,
    killWindowMs: o.killWindowMs,
    sigtermShare: 0.2,
    appId: APP_IDS[mode],
    simulatorUrl: simulator.url,
    configFile: writeEmptyConfig(dir),
    finishTimeoutMs: o.scale === 'full' ? 10 * 60_000 : 2 * 60_000,
    random: createRandomFor(o.seed, mode),
    control: (o.control ?? false) && mode !== 'send',
  };
  mkdirSync(reportDirOf(settings), { recursive: true });
  log(`${mode}: ${o.kills} kills against ${simulator.url} (work folder ${dir})`);
  const { run, journal, checks, batches } = await runOne(settings, o).finally(() =>
    simulator.stop(),
  );
  const counts = await simulator.stop();
  const figures = judge(settings, run, {
    records: readRecordFile(simulator.recordFile),
    counts,
    journal,
    checks,
    batches,
    faultSpec: o.faults,
    simulatorSeed,
    ...(mode === 'cluster' ? { concurrencyLimit: CLUSTER_CONCURRENCY } : {}),
  });
  figures.elapsedMs = Date.now() - started;
  log(
    `${mode}: ${figures.failures.length === 0 ? 'passed' : `FAILED (${figures.failures.length})`} in ${(figures.elapsedMs / 1000).toFixed(1)} s`,
  );
  return figures;
}

/**
 * A mode's run, the journal's files at its end, what is wrong with its folders, and the batches of
 * the files cancelled.
 */
async function runOne(
  s: ModeSettings,
  o: ChaosOptions,
): Promise<{ run: ModeRun; journal: JournalFile[]; checks: string[]; batches: CancelledBatch[] }> {
  if (s.mode === 'send') {
    const run = await runSendMode(s);
    return { run, journal: journalFiles(dataDirOf(s)), checks: [], batches: [] };
  }
  if (s.mode === 'daemon') {
    const run = await runDaemonMode(s);
    return {
      run,
      journal: journalFiles(dataDirOf(s)),
      checks: checkFolders(s, run.drops),
      batches: cancelledBatches(dataDirOf(s)),
    };
  }
  const postgres = await startPostgres();
  try {
    const cluster: ClusterSettings = {
      ...s,
      nodes: o.nodes ?? 3,
      databaseUrl: await postgres.freshDatabase(),
      restartDatabase: () => postgres.restart(),
      concurrency: CLUSTER_CONCURRENCY,
      pauses: o.pauses ?? 0,
      partitions: o.partitions ?? 0,
    };
    const run = await runClusterMode(cluster);
    const journal = await clusterJournal(cluster);
    const batches = await pgCancelledBatches(cluster.databaseUrl);
    dumpJournal(cluster.databaseUrl, path.join(s.dir, 'journal.sql')); // kept with a failed run
    return { run, journal, checks: checkNodeFolders(cluster, run), batches };
  } finally {
    await postgres.stop();
  }
}

/** The PostgreSQL journal as SQL (pg_dump), to look into a failed run; nothing if it cannot. */
function dumpJournal(url: string, file: string): void {
  const bin = postgresBinDir();
  if (bin)
    spawnSync(path.join(bin, 'pg_dump'), ['--no-owner', '-f', file, url], { stdio: 'ignore' });
}

/**
 * The kill plan's own stream of random numbers: not the files' (generateRound) nor the simulator's.
 */
function createRandomFor(seed: number, mode: Mode): () => number {
  return seededRandom(
    (seed ^ { send: 0x51ed2701, daemon: 0x2f6b93c5, cluster: 0x6c3a1d47 }[mode]) >>> 0,
  );
}

async function main(): Promise<void> {
  let options: ReturnType<typeof parseChaosArgs>;
  try {
    options = parseChaosArgs(process.argv.slice(2));
  } catch (err) {
    if (!(err instanceof UsageError)) throw err;
    process.stderr.write(`chaos: ${err.message}\n${USAGE}\n`);
    process.exit(2);
  }
  const log = (line: string) => process.stderr.write(`${line}\n`);
  const figures = await runChaos({ ...options, log });
  process.stdout.write(
    options.json ? `${JSON.stringify(figures)}\n` : `${formatFigures(figures)}\n`,
  );
  process.exit(figures.ok ? 0 : 1);
}

// Run as a program (npm run chaos), not when a test imports runChaos.
if (
  process.argv[1] !== undefined &&
  path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)
)
  await main();
