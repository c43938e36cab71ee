// What `smsdrop status` shows: what the sending process is doing now, read from the journal only
// (never the lock): which process holds the data directory, files in progress with progress and
// ETA, requests in flight, the send rate over the last minute, and whether sending is paused and
// why. The pause comes from the daemon's own record (daemon_state) while it runs; otherwise it is
// inferred: the last answer of all was account-fatal, and sending stops on those. And how big the
// journal is, and since when it holds files' rows (pruning, SMSDROP_KEEP, removes older ones).
// And the files waiting in inbox/, read from the folder, so that one not taken is seen.
import path from 'node:path';
import { lockHolder } from '../datadir/lock.js';
import { filesWaitingIn, type WaitingFile } from '../datadir/inbox.js';
import type {
  DaemonState,
  FileReads,
  HeldFile,
  JournalSize,
  NodeRecord,
  StatusReads,
} from '../ports/index.js';
import { accountStopCode, CONCURRENCY_CODES, describeStatusCode } from '../provider/codes.js';
import type { ErrorCode } from '../errors.js';
import { formatBytes, formatDuration } from '../log/duration.js';
import { formatMoment, zoneName } from '../log/time.js';
import { renderTable } from './common.js';
import { waitingFor } from '../ports/control.js';
import { estimateRows } from './estimate.js';
import { fileNodesLines, withNodes } from './fileNodes.js';
import {
  beingSent,
  type FileProgress,
  filesTable,
  fileTimes,
  finishAdvice,
  heldByOperator,
  type Senders,
} from './fileState.js';

/** The window of "current" rates. */
const RATE_WINDOW_MS = 60_000;
/** The shortest span a rate is measured over: a file a few milliseconds old has no rate yet. */
const MIN_RATE_SPAN_MS = 1_000;

export type { FileProgress } from './fileState.js';

export interface NodeStatus {
  id: string;
  started_at: string;
  last_seen: string;
  /** A living node is seen every lease/3 (10 s by default). */
  seen_seconds_ago: number;
  /** Batches it has claimed and may be sending. */
  batches_held: number;
}

/** Nodes shown: those seen this recently (each start with the default id is a new node). */
export const NODES_SEEN_WITHIN_MS = 3_600_000;

export interface StatusReport {
  now: string;
  data_dir: string;
  /** The process holding the data directory, if it is alive. */
  process: { pid: number; what: string; since: string | null } | null;
  paused: {
    reason: string;
    /** The pause's stable code (docs/errors.md); null for a sending window that is closed. */
    code: ErrorCode | null;
    since: string | null;
    source: 'daemon' | 'last answer';
  } | null;
  /**
   * What the running daemon's requests wait for while it is not paused (a message window used up).
   */
  waiting: string | null;
  in_flight: { requests: number; numbers: number };
  /**
   * The provider's "too many requests at once" or "too close together" answers over the last
   * minute: each halves the requests in flight of the process sending (send/concurrency.ts), which
   * then grow back one at a time. Empty: nothing lowered them lately.
   */
  concurrency_lowered_by: Array<{ code: string; count: number }>;
  /** Over the last minute, or since sending started if that is less. */
  rate: { requests_per_second: number; rows_per_second: number };
  /** Some file is being sent by a living process now; false: idle, or stopped. */
  sending: boolean;
  files: FileProgress[];
  /**
   * Files in inbox/ not taken yet, longest waiting first: since their last change there (their
   * move into inbox/, or their last write while being copied).
   */
  inbox: WaitingFile[];
  /**
   * The daemons sharing a PostgreSQL journal, seen in the last hour or holding batches, the most
   * recently seen first; empty with the SQLite journal (one server: see process).
   */
  nodes: NodeStatus[];
  /**
   * The journal on disk (null: no journal yet), the oldest file whose rows it holds, and how many
   * were pruned.
   */
  journal: (JournalSize & { oldest_file: HeldFile | null; pruned_files: number }) | null;
}

export async function readStatus(
  reads: (StatusReads & Pick<FileReads, 'file'>) | undefined,
  dataDir: string,
  now: number = Date.now(),
): Promise<StatusReport> {
  const since = new Date(now - RATE_WINDOW_MS).toISOString();
  const holder = currentHolder(dataDir);
  const nodes = reads ? nodesOf(await reads.nodes(NODES_SEEN_WITHIN_MS), now) : [];
  const files = reads
    ? await withNodes(reads, await filesInProgress(reads, since, now, { holder, nodes }))
    : [];
  const requests = reads ? await reads.requestsFinishedSince(since) : { count: 0, first: null };
  const daemon = reads ? await runningDaemonState(reads, holder) : undefined;
  return {
    now: new Date(now).toISOString(),
    data_dir: dataDir,
    process: holder,
    paused: reads ? await pauseOf(reads, daemon, files.length > 0) : null,
    waiting: daemon?.waiting ?? null,
    in_flight: {
      requests: sum(files, (f) => f.in_flight_requests),
      numbers: sum(files, (f) => f.in_flight_numbers),
    },
    concurrency_lowered_by: reads
      ? await reads.answersWithCodesSince([...CONCURRENCY_CODES], since)
      : [],
    rate: {
      requests_per_second: round(requests.count / rateSpanSeconds(requests.first, now)),
      rows_per_second: round(sum(files, (f) => f.rows_per_second)),
    },
    sending: files.some((f) => f.being_sent),
    files,
    inbox: filesWaitingIn(path.join(dataDir, 'inbox'), now),
    nodes,
    journal: reads
      ? {
          ...(await reads.size()),
          oldest_file: (await reads.oldestHeldFile()) ?? null,
          pruned_files: await reads.prunedFileCount(),
        }
      : null,
  };
}

/**
 * Seconds a rate is measured over: the last minute, or the time since `start` when that is less.
 * Divided by a whole minute, a run 6 s old reads ten times too slow and its ETA ten times too long.
 */
function rateSpanSeconds(start: string | null, now: number): number {
  const elapsed = start === null ? RATE_WINDOW_MS : now - Date.parse(start);
  return (
    Math.min(
      RATE_WINDOW_MS,
      Math.max(MIN_RATE_SPAN_MS, Number.isNaN(elapsed) ? RATE_WINDOW_MS : elapsed),
    ) / 1000
  );
}

async function filesInProgress(
  reads: StatusReads & Pick<FileReads, 'file'>,
  since: string,
  now: number,
  senders: Senders,
): Promise<FileProgress[]> {
  const progress: FileProgress[] = [];
  for (const f of await reads.unfinishedFileLines()) {
    const record = await reads.file(f.id);
    const sent = beingSent(record, senders);
    const estimate = estimateRows(f, record);
    const rows = estimate?.rows ?? f.rows;
    const sendable = estimate?.sendable ?? f.rows - f.invalid - f.duplicates;
    const settled = f.accepted + f.failed + f.unknown;
    const pending = estimate?.estimated ? Math.max(0, sendable - settled) : f.pending;
    const settledLastMinute = await reads.numbersSettledSince(f.id, since);
    const flight = await reads.inFlight(f.id);
    const rowsPerSecond = settledLastMinute / rateSpanSeconds(f.started_at, now);
    // No ETA for a file nobody sends, nor for one read too little to say how long it is.
    const timed = sent && rowsPerSecond > 0 && estimate !== undefined;
    const times = fileTimes(record, now, sent);
    progress.push({
      id: f.id,
      name: f.name,
      status: waitingFor({ control: f.control, startAt: f.start_at }, now) ?? f.status,
      start_at: f.start_at,
      rows,
      sendable,
      settled,
      pending,
      progress: f.status === 'intake' ? null : sendable > 0 ? round(settled / sendable, 4) : 1,
      rows_per_second: round(rowsPerSecond),
      eta_seconds: timed ? Math.ceil(pending / rowsPerSecond) : null,
      in_flight_requests: flight.requests,
      in_flight_numbers: flight.numbers,
      estimated: estimate?.estimated ?? f.status === 'intake',
      being_sent: sent,
      sending_seconds: times?.sending_seconds ?? null,
      since_taken_seconds: times?.since_taken_seconds ?? null,
    });
  }
  return progress;
}

/**
 * The daemon's own record, if the process holding the data directory is the daemon that wrote it.
 */
async function runningDaemonState(
  reads: StatusReads,
  holder: StatusReport['process'],
): Promise<DaemonState | undefined> {
  const daemon = await reads.daemonState(holder?.pid);
  return daemon && holder && daemon.pid === holder.pid ? daemon : undefined;
}

async function pauseOf(
  reads: StatusReads,
  daemon: DaemonState | undefined,
  filesLeft: boolean,
): Promise<StatusReport['paused']> {
  if (daemon)
    return daemon.paused
      ? {
          reason: daemon.paused,
          code: daemon.paused_code,
          since: daemon.paused_since,
          source: 'daemon',
        }
      : null;
  if (!filesLeft) return null;
  const last = await reads.lastAnswer();
  if (last?.outcome !== 'rejected:account-fatal' || !last.status_code) return null;
  return {
    reason: describeStatusCode(last.status_code),
    code: accountStopCode(last.status_code),
    since: last.finished_at,
    source: 'last answer',
  };
}

/** Who holds the data-directory lock, if that process is alive. */
function nodesOf(nodes: readonly NodeRecord[], now: number): NodeStatus[] {
  return nodes.map((n) => ({
    id: n.id,
    started_at: n.startedAt,
    last_seen: n.lastSeen,
    seen_seconds_ago: Math.max(0, round((now - Date.parse(n.lastSeen)) / 1000)),
    batches_held: n.batchesHeld,
  }));
}

function currentHolder(dataDir: string): StatusReport['process'] {
  const holder = lockHolder(dataDir);
  return holder ? { pid: holder.pid, what: holder.what, since: holder.since ?? null } : null;
}

/** For a person: times in `zone` (the host's when unset); the JSON keeps the journal's UTC. */
export function renderStatus(s: StatusReport, zone?: string): string {
  const out = [
    `smsdrop status at ${formatMoment(s.now, zone)} ${zoneName(zone)} (data directory ${s.data_dir})`,
  ];
  out.push(
    s.process
      ? `process    pid ${s.process.pid}: ${s.process.what}${s.process.since ? `, since ${formatMoment(s.process.since, zone)}` : ''}`
      : 'process    none: no smsdrop process is using this data directory',
  );
  out.push(`sending    ${sendingState(s, zone)}`);
  out.push(`in flight  ${inFlight(s)}`);
  if (s.concurrency_lowered_by.length > 0) {
    const answers = s.concurrency_lowered_by.map((c) => `${c.code} ×${c.count}`).join(', ');
    out.push(
      `lowered    the provider said too many requests at once (${answers} in the last minute): requests in flight were halved, and grow back one at a time`,
    );
  }
  // A rate measured over the last minute says nothing of now once nothing is being sent.
  out.push(
    s.sending
      ? `rate       ${s.rate.requests_per_second} requests/s, ${s.rate.rows_per_second} rows/s over the last minute (or since sending started)`
      : 'rate       idle: nothing is being sent',
  );
  out.push(`journal    ${journalLine(s.journal, zone)}`);
  out.push(`inbox      ${inboxLine(s)}`);
  if (s.nodes.length > 0) out.push(nodesTable(s.nodes, zone));
  if (s.files.length === 0) {
    out.push('no file in progress');
    return out.join('\n');
  }
  out.push('files in progress:', filesTable(s.files), ...fileNodesLines(s.files));
  const daemonRuns = s.process?.what.startsWith('smsdrop run') ?? false;
  for (const f of s.files.filter((file) => heldByOperator(file) && file.status !== 'held'))
    out.push(operatorHoldLine(f, zone));
  for (const f of s.files.filter((file) => !file.being_sent && !heldByOperator(file)))
    out.push(
      `${f.name} (id ${f.id}) is not moving: stopped: no process is sending it; ${finishAdvice(f.name, f.status !== 'intake', daemonRuns)}`,
    );
  return out.join('\n');
}

/** The nodes sharing the journal: a node not seen for a while is gone (its leases pass). */
function nodesTable(nodes: readonly NodeStatus[], zone: string | undefined): string {
  return [
    `nodes      ${nodes.length} sharing the journal (seen in the last hour or holding batches):`,
    renderTable(
      ['node', 'started', 'last seen', 'batches held'],
      nodes.map((n) => [
        n.id,
        formatMoment(n.started_at, zone),
        `${formatDuration(n.seen_seconds_ago)} ago`,
        n.batches_held,
      ]),
    ),
  ].join('\n');
}

function journalLine(j: StatusReport['journal'], zone: string | undefined): string {
  if (!j) return 'none yet';
  const parts = j.server
    ? 'the PostgreSQL database'
    : `database ${formatBytes(j.database)}, WAL ${formatBytes(j.wal)}, intents ${formatBytes(j.intents)}; ${formatBytes(j.free)} free inside`;
  const pruned =
    j.pruned_files > 0 ? `; ${j.pruned_files} older file(s) pruned to one line each` : '';
  const oldest = j.oldest_file
    ? `oldest file held: id ${j.oldest_file.id} ${j.oldest_file.name}, taken ${formatMoment(j.oldest_file.created_at, zone)}${j.oldest_file.finished_at ? `, ended ${formatMoment(j.oldest_file.finished_at, zone)}` : ', not ended'}`
    : 'no file held';
  return `${formatBytes(j.bytes)} (${parts}); ${oldest}${pruned}`;
}

/** The files waiting in inbox/ and for how long, the longest waiting first (ten at most). */
function inboxLine(s: StatusReport): string {
  if (s.inbox.length === 0) return 'no file waiting';
  const shown = s.inbox
    .slice(0, 10)
    .map((f) => `${f.name} (${formatDuration(f.waiting_seconds)})`)
    .join(', ');
  const more = s.inbox.length > 10 ? ` and ${s.inbox.length - 10} more` : '';
  const taker = s.process ? '' : '; taken once the daemon runs';
  return `${s.inbox.length} file(s) waiting: ${shown}${more}${taker}`;
}

function inFlight(s: StatusReport): string {
  const { requests, numbers } = s.in_flight;
  // Without a running process, a batch still marked sending was cut off mid-request.
  if (!s.process && requests > 0)
    return `none; ${requests} requests (${numbers} numbers) were cut off mid-request and are resolved at the next run`;
  return `${requests} requests (${numbers} numbers)`;
}

/** A scheduled or paused file's line (a held one has its own, with its preview: cli/status.ts). */
function operatorHoldLine(f: FileProgress, zone: string | undefined): string {
  return f.status === 'scheduled'
    ? `${f.name} (id ${f.id}) is scheduled: it starts at ${formatMoment(f.start_at, zone)}`
    : `${f.name} (id ${f.id}) is paused by an operator: smsdrop resume ${f.id} goes on with it`;
}

function sendingState(s: StatusReport, zone: string | undefined): string {
  if (s.paused)
    return `PAUSED${s.paused.since ? ` since ${formatMoment(s.paused.since, zone)}` : ''}: ${s.paused.code ? `${s.paused.code}: ` : ''}${s.paused.reason}`;
  if (s.waiting) return `WAITING: ${s.waiting}`;
  const held = s.files.filter(heldByOperator);
  if (held.length > 0 && held.length === s.files.length)
    return `waiting for an operator: ${held.map((f) => `${f.name} ${f.status}`).join(', ')}`;
  if (!s.sending)
    return s.files.length > 0
      ? `stopped: no process is sending the ${s.files.length} unfinished file(s) below`
      : 'idle';
  if (s.in_flight.requests > 0 || s.rate.requests_per_second > 0) return 'active';
  return 'waiting (retry delays)';
}

function sum<T>(items: readonly T[], of: (item: T) => number): number {
  return items.reduce((total, item) => total + of(item), 0);
}

function round(n: number, places = 2): number {
  const f = 10 ** places;
  return Math.round(n * f) / f;
}
