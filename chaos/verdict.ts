// A mode's verdict and figures: what the run did (kills, faults, requests), what reached the
// simulator (each expected message once), and how the journal and the folders ended; then the
// figures as text.
import { createFaultChooser, parseFaults } from '../src/simulator/faults.js';
import type { readRecordFile } from '../src/simulator/record.js';
import {
  checkDeliveries,
  checkJournalFiles,
  type DeliveryCheck,
  type JournalFile,
} from './check.js';
import { checkCancels, type CancelledBatch, formatControl, requiredMessages } from './control.js';
import { expectedMessages, type Scale } from './files.js';
import type { Mode, ModeRun, ModeSettings } from './mode.js';
import type { SimulatorCounts } from './procs.js';
import { type FaultCounts, formatFaultCounts } from './clusterFaults.js';

export interface ModeFigures {
  mode: Mode;
  kills: { total: number; sigkill: number; sigterm: number };
  /** Cluster mode: nodes stopped (SIGSTOP) and cut off (relays held) beside the kills. */
  nodeFaults: FaultCounts;
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
  /** Cluster mode: the account's concurrency, which peakInFlight must not pass. */
  concurrencyLimit?: number;
  /** Files the journal still shows `sending` at the end (each one a failure). */
  sending: string[];
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
  /** Cluster mode: SMSDROP_CONCURRENCY, the account's limit across the nodes. */
  concurrencyLimit?: number;
}

export function judge(s: ModeSettings, run: ModeRun, e: Evidence): ModeFigures {
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
  const sending = journal
    .filter((f) => f.status === 'sending')
    .map((f) => `${f.name} (id ${f.id})`);
  if (sending.length > 0)
    failures.push(`${sending.length} files left sending at the end: ${sending.join(', ')}`);
  if (e.concurrencyLimit !== undefined && counts.peakInFlight > e.concurrencyLimit)
    failures.push(
      `${counts.peakInFlight} requests in flight at once across the nodes, above the account's SMSDROP_CONCURRENCY=${e.concurrencyLimit} (received at, reqId, fault; look them up in journal.sql's attempts: ${counts.peakRequests.join('; ')})`,
    );
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
  if (run.nodeFaults.skipped > 0)
    failures.push(`${run.nodeFaults.skipped} pauses fell on a node that was not running`);
  if (kills < s.kills)
    failures.push(`only ${kills} of ${s.kills} kills landed on a running process`);
  const faults = countFaults(e.faultSpec, e.simulatorSeed, counts.requests);
  return {
    mode: s.mode,
    kills: { total: kills, ...run.kills },
    nodeFaults: run.nodeFaults,
    processes: run.starts,
    rounds: run.rounds,
    faults,
    faultsTotal: Object.values(faults).reduce((a, b) => a + b, 0),
    requests: counts.requests,
    peakInFlight: counts.peakInFlight,
    ...(e.concurrencyLimit === undefined ? {} : { concurrencyLimit: e.concurrencyLimit }),
    sending,
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
    ...(f.mode === 'cluster' ? [`  nodes        ${formatFaultCounts(f.nodeFaults)}`] : []),
    `  faults       ${f.faultsTotal} (${faults})`,
    `  requests     ${f.requests} reached the simulator, ${f.acceptedRequests} accepted, at most ${f.peakInFlight} at once${f.concurrencyLimit === undefined ? '' : ` (the account's limit ${f.concurrencyLimit})`}`,
    `  files        ${f.filesDone} of ${f.files} done (${f.rounds} round${f.rounds === 1 ? '' : 's'}${f.mode === 'send' ? '' : `, ${f.drops} copies dropped`}), ${f.sending.length} left sending`,
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
    ...c.modes.map((f) => verdictLine(c.seed, f)),
    ...(c.kept
      ? [`work folder kept: ${c.dir} (processes.log, data/, accepted.jsonl per mode)`]
      : []),
    `replay: ${c.replay}`,
  ].join('\n');
}

/** One line a mode: what it did to smsdrop and what came of it, to quote. */
export function verdictLine(seed: number, f: ModeFigures): string {
  return `verdict ${f.mode}: ${f.failures.length === 0 ? 'PASSED' : 'FAILED'}, seed ${seed}: kills ${f.kills.total}, ${formatFaultCounts(f.nodeFaults)}, messages ${f.expected}, duplicates ${f.duplicates}, missing ${f.missing}`;
}
