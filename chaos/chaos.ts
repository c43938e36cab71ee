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
import { parseArgs } from 'node:util';
import { sameProviderDay } from '../src/send/policy.js';
import { createFaultChooser, parseFaults, seededRandom } from '../src/simulator/faults.js';
import { readRecordFile } from '../src/simulator/record.js';
import {
  checkDeliveries,
  checkJournalFiles,
  type DeliveryCheck,
  type JournalFile,
  journalFiles,
  cancelledBatches,
  pgCancelledBatches,
} from './check.js';
import { checkFolders, runDaemonMode } from './daemonMode.js';
import { checkCancels, type CancelledBatch, formatControl, requiredMessages } from './control.js';
import { expectedMessages, type Scale, SIMULATOR_TEMPLATES } from './files.js';
import { dataDirOf, type Mode, type ModeRun, type ModeSettings, reportDirOf } from './mode.js';
import { type SimulatorCounts, startSimulatorProcess, writeEmptyConfig } from './procs.js';
import { runSendMode } from './sendMode.js';
import {
  type ClusterSettings,
  checkNodeFolders,
  clusterJournal,
  runClusterMode,
} from './clusterMode.js';
import { postgresBinDir, startPostgres } from '../test/pg/cluster.js';
import { spawnSync } from 'node:child_process';

export const DEFAULT_FAULTS =
  'http500@0.05,cut-after@0.03,cut-before@0.03,status=160000@0.03,stall@0.01';

export interface ChaosOptions {
  kills: number;
  mode: Mode | 'both';
  /** Cluster mode: daemons on the one PostgreSQL journal (default 3). */
  nodes?: number;
  seed: number;
  scale: Scale;
  faults: string;
  killWindowMs: [number, number];
  /** Keep the work folder even when the run passed. */
  keep: boolean;
  /** Daemon and cluster modes: pause, resume and cancel commands among the kills. */
  control?: boolean;
  /** Lines of progress (default: none). */
  log?: (line: string) => void;
}

export interface ModeFigures {
  mode: Mode;
  kills: { total: number; sigkill: number; sigterm: number };
  /** smsdrop processes started: killed, run to the end, retries. */
  processes: number;
  rounds: number;
  /** Faults the simulator injected, by rule (replayed from its seed and its request count). */
  faults: Record<string, number>;
  faultsTotal: number;
  /** Requests that reached the simulator, whatever became of them. */
  requests: number;
  /** The most requests in flight at once at the simulator (all processes together). */
  peakInFlight: number;
  acceptedRequests: number;
  deliveries: number;
  expected: number;
  expectedInvalid: number;
  duplicates: number;
  extraDeliveries: number;
  missing: number;
  unexpected: number;
  files: number;
  filesDone: number;
  /** Daemon mode: copies dropped into inbox/. */
  drops: number;
  unknownResent: number;
  failedResent: number;
  elapsedMs: number;
  failures: string[];
  notes: string[];
  /** With --control: the commands run (absent without). */
  control?: string;
  samples: DeliveryCheck['samples'];
}

export interface ChaosFigures {
  ok: boolean;
  seed: number;
  scale: Scale;
  faultSpec: string;
  modes: ModeFigures[];
  elapsedMs: number;
  /** The work folder (kept when the run failed, or with keep). */
  dir: string;
  kept: boolean;
  replay: string;
}

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
  const nodes = o.mode === 'cluster' ? ` --nodes ${o.nodes ?? 3}` : '';
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
  });
  if (mode === 'cluster' && counts.peakInFlight > CLUSTER_CONCURRENCY)
    figures.failures.push(
      `${counts.peakInFlight} requests in flight at once across the nodes, above SMSDROP_CONCURRENCY=${CLUSTER_CONCURRENCY}`,
    );
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

/**
 * Faults the simulator injected: its chooser replayed over its requests (it draws only from its
 * seed).
 */
export function countFaults(spec: string, seed: number, requests: number): Record<string, number> {
  const rules = parseFaults(spec);
  const choose = createFaultChooser(rules, seed);
  const counts: Record<string, number> = {};
  for (const rule of rules)
    counts[rule.kind === 'status' ? `status=${rule.statusCode}` : rule.kind] = 0;
  for (let n = 1; n <= requests; n++) {
    const rule = choose(n);
    if (rule) counts[rule.kind === 'status' ? `status=${rule.statusCode}` : rule.kind]! += 1;
  }
  return counts;
}

/** What a mode's verdict is made of, read once the run is over. */
interface Evidence {
  records: ReturnType<typeof readRecordFile>;
  counts: SimulatorCounts;
  journal: JournalFile[];
  /** What is wrong with the mode's folders. */
  checks: string[];
  /** The batches of the files cancelled (control commands). */
  batches: CancelledBatch[];
  faultSpec: string;
  simulatorSeed: number;
}

function judge(s: ModeSettings, run: ModeRun, e: Evidence): ModeFigures {
  const { journal, counts } = e;
  const cancelled = run.control.cancelledAt;
  const delivered = checkDeliveries(
    e.records,
    s.appId,
    expectedMessages(run.files),
    requiredMessages(run.files, cancelled),
  );
  const wanted = run.files.map((f) => ({
    name: f.name,
    rows: f.rows,
    invalid: f.invalid,
    cancelled: cancelled.has(f.name),
  }));
  const failures = [...run.problems, ...checkJournalFiles(journal, wanted)];
  failures.push(...checkCancels(run.control, journal, e.batches, e.records));
  const names = new Set(wanted.map((w) => w.name));
  for (const f of journal)
    if (!names.has(f.name))
      failures.push(
        `${f.name} (id ${f.id}): in the journal, but no such file was generated (status ${f.status})`,
      );
  failures.push(...e.checks);
  if (delivered.duplicates > 0)
    failures.push(
      `${delivered.duplicates} messages delivered more than once, e.g. ${delivered.samples.duplicates[0]}`,
    );
  if (delivered.missing > 0)
    failures.push(
      `${delivered.missing} expected messages never delivered, e.g. ${delivered.samples.missing[0]}`,
    );
  if (delivered.unexpected > 0)
    failures.push(
      `${delivered.unexpected} messages delivered that no file asked for, e.g. ${delivered.samples.unexpected[0]}`,
    );
  const kills = run.kills.sigkill + run.kills.sigterm;
  if (kills < s.kills)
    failures.push(`only ${kills} of ${s.kills} kills landed on a running process`);
  const faults = countFaults(e.faultSpec, e.simulatorSeed, counts.requests);
  return {
    mode: s.mode,
    kills: { total: kills, ...run.kills },
    processes: run.starts,
    rounds: run.rounds,
    faults,
    faultsTotal: Object.values(faults).reduce((a, b) => a + b, 0),
    requests: counts.requests,
    peakInFlight: counts.peakInFlight,
    acceptedRequests: delivered.acceptedRequests,
    deliveries: delivered.deliveries,
    expected: delivered.expected,
    expectedInvalid: run.files.reduce((sum, f) => sum + f.invalid, 0),
    duplicates: delivered.duplicates,
    extraDeliveries: delivered.extraDeliveries,
    missing: delivered.missing,
    unexpected: delivered.unexpected,
    files: run.files.length,
    filesDone: run.files.filter((f) =>
      journal.some((j) => j.name === f.name && j.status === 'done'),
    ).length,
    drops: run.drops,
    unknownResent: run.unknownResent,
    failedResent: run.failedResent,
    elapsedMs: 0,
    failures,
    notes: run.notes,
    ...(s.control ? { control: formatControl(run.control) } : {}),
    samples: delivered.samples,
  };
}

function formatMode(f: ModeFigures): string {
  const faults = Object.entries(f.faults)
    .map(([k, n]) => `${k} ${n}`)
    .join(', ');
  const lines = [
    `mode ${f.mode}: ${f.failures.length === 0 ? 'PASSED' : 'FAILED'} in ${(f.elapsedMs / 1000).toFixed(1)} s`,
    `  kills        ${f.kills.total} (SIGKILL ${f.kills.sigkill}, SIGTERM ${f.kills.sigterm}) over ${f.processes} smsdrop processes`,
    `  faults       ${f.faultsTotal} (${faults})`,
    `  requests     ${f.requests} reached the simulator, ${f.acceptedRequests} accepted, at most ${f.peakInFlight} at once`,
    `  files        ${f.filesDone} of ${f.files} done (${f.rounds} round${f.rounds === 1 ? '' : 's'}${f.mode === 'send' ? '' : `, ${f.drops} copies dropped`})`,
    `  expected     ${f.expected} messages (${f.expectedInvalid} rows invalid on purpose, never sent)`,
    `  deliveries   ${f.deliveries}`,
    `  duplicates   ${f.duplicates}${f.extraDeliveries > f.duplicates ? ` (${f.extraDeliveries} extra deliveries)` : ''}`,
    `  missing      ${f.missing}`,
    `  unexpected   ${f.unexpected}`,
    `  unknown rows resent by retry --unknown: ${f.unknownResent}`,
    `  failed rows resent by retry --failed: ${f.failedResent}`,
    ...(f.control === undefined ? [] : [`  control      ${f.control}`]),
  ];
  for (const failure of f.failures.slice(0, 20)) lines.push(`  FAIL ${failure}`);
  if (f.failures.length > 20) lines.push(`  ... and ${f.failures.length - 20} more`);
  return lines.join('\n');
}

export function formatFigures(c: ChaosFigures): string {
  return [
    `chaos: ${c.ok ? 'PASSED' : 'FAILED'}, seed ${c.seed}, scale ${c.scale}, faults ${c.faultSpec}, ${(c.elapsedMs / 1000).toFixed(1)} s`,
    ...c.modes.map(formatMode),
    ...(c.kept
      ? [`work folder kept: ${c.dir} (processes.log, data/, accepted.jsonl per mode)`]
      : []),
    `replay: ${c.replay}`,
  ].join('\n');
}

export const USAGE = `usage: npm run chaos -- [--kills N] [--mode send|daemon|both|cluster] [--nodes N] [--seed S]
       [--scale full|small] [--faults SPEC] [--kill-window MIN-MAX] [--control] [--json] [--keep]
  --kills N            kills per mode (default 100)
  --mode               send, daemon, both (send then daemon) or cluster (default both)
  --nodes N            cluster mode: daemons sharing one PostgreSQL journal (default 3)
  --seed S             seed of the files, the kills and the simulator's faults (default: random, printed)
  --scale              full (a group of 20,500 numbers, 3,000 small groups...) or small (for the tests)
  --faults SPEC        the simulator's --faults (default ${DEFAULT_FAULTS})
  --kill-window A-B    a kill lands A to B ms after the process starts (default 50-2500)
  --control            daemon and cluster modes: now and then between kills, smsdrop pause,
                       resume or (rarer) cancel on a file in flight; the verdict adds: a cancelled
                       row never received, no request of a cancelled file after its cancel returned
  --json               print the figures as one JSON object on stdout (progress goes to stderr)
  --keep               keep the work folder even when the run passed`;

class UsageError extends Error {}

function whole(
  name: string,
  text: string | undefined,
  fallback: number,
  min: number,
  max: number,
): number {
  if (text === undefined) return fallback;
  const n = Number(text);
  if (!/^\d+$/.test(text) || n < min || n > max)
    throw new UsageError(`--${name} expects a whole number from ${min} to ${max}, got "${text}"`);
  return n;
}

function oneOf<T extends string>(
  name: string,
  text: string | undefined,
  allowed: readonly T[],
  fallback: T,
): T {
  if (text === undefined) return fallback;
  if (!(allowed as readonly string[]).includes(text))
    throw new UsageError(`--${name} expects ${allowed.join(', ')}, got "${text}"`);
  return text as T;
}

function killWindow(text: string | undefined): [number, number] {
  if (text === undefined) return [50, 2500];
  const m = /^(\d+)-(\d+)$/.exec(text);
  if (!m || Number(m[1]) > Number(m[2]))
    throw new UsageError(`--kill-window expects MIN-MAX in ms with MIN <= MAX, got "${text}"`);
  return [Number(m[1]), Number(m[2])];
}

/** The options of a command line; throws UsageError. */
export function parseChaosArgs(argv: string[]): ChaosOptions & { json: boolean } {
  let parsed;
  try {
    parsed = parseArgs({
      args: argv,
      options: {
        kills: { type: 'string' },
        mode: { type: 'string' },
        nodes: { type: 'string' },
        seed: { type: 'string' },
        scale: { type: 'string' },
        faults: { type: 'string' },
        'kill-window': { type: 'string' },
        json: { type: 'boolean' },
        control: { type: 'boolean' },
        keep: { type: 'boolean' },
      },
      strict: true,
      allowPositionals: false,
    }).values;
  } catch (err) {
    throw new UsageError((err as Error).message);
  }
  const faults = parsed.faults ?? DEFAULT_FAULTS;
  try {
    parseFaults(faults);
  } catch (err) {
    throw new UsageError(`--faults: ${(err as Error).message}`);
  }
  return {
    kills: whole('kills', parsed.kills, 100, 0, 100_000),
    mode: oneOf('mode', parsed.mode, ['send', 'daemon', 'both', 'cluster'] as const, 'both'),
    nodes: whole('nodes', parsed.nodes, 3, 2, 8),
    seed: whole('seed', parsed.seed, Math.floor(Math.random() * 0xffffffff), 0, 0xffffffff),
    scale: oneOf('scale', parsed.scale, ['full', 'small'] as const, 'full'),
    faults,
    killWindowMs: killWindow(parsed['kill-window']),
    json: parsed.json ?? false,
    keep: parsed.keep ?? false,
    control: parsed.control ?? false,
  };
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
