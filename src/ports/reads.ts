// What reports, the HTTP surface, the CLI and the dry run read of the journal. Split in four so
// that each implementation stays small; ReadStore is all of them. The result-file pages
// (resultPages, rejectedRows: ports/results.ts) hand page text to src/results/, not records.
import type { RepeatWindow } from '../config/settings/durations.js';
import type { Awaitable, Pages } from './awaitable.js';
import type { ResultReads } from './results.js';
import type {
  DaemonState,
  FailureCount,
  FileLine,
  FileRecord,
  GroupToSend,
  HeldFile,
  JournalSize,
  RecipientRow,
  SentBeforeLookup,
  SuppressedNumber,
  ValueCount,
} from './records.js';

export interface FileReads {
  file(id: number): Awaitable<FileRecord | undefined>;
  filesNamed(name: string): Awaitable<FileRecord[]>;
  filesByShaPrefix(shaPrefix: string): Awaitable<FileRecord[]>;
  listFiles(): Awaitable<FileLine[]>;
  /** Ids of the files whose rows were pruned (SMSDROP_KEEP): their counts stay, their rows went. */
  prunedFileIds(): Awaitable<ReadonlySet<number>>;
  fileLine(fileId: number): Awaitable<FileLine>;
  repeatsOf(fileId: number): Awaitable<number>;
  failureCounts(fileId: number): Awaitable<FailureCount[]>;
  invalidReasons(
    fileId: number,
    limit?: number,
  ): Awaitable<Array<{ reason: string; count: number }>>;
  invalidRows(fileId: number, limit: number): Awaitable<Array<{ line: number; reason: string }>>;
  requestTiming(
    fileId: number,
  ): Awaitable<{ requests: number; first_send: string | null; last_send: string | null }>;
  unevenValueCounts(fileId: number): Awaitable<ValueCount[]>;
  /** Other files' rows for the repeat window, for intake of `fileId` (undefined: window off). */
  sentBefore(fileId: number, window: RepeatWindow): Awaitable<SentBeforeLookup | undefined>;
}

/** A daemon sharing the journal (PostgreSQL): what status, /metrics and the dashboard show. */
/** The nodes at work on one file: its reader, and the batches each node holds. */
export interface FileNodes {
  fileId: number;
  /** The node reading (and filing) it; null: none now (its reader stopped, or it is read in). */
  reader: string | null;
  /** Each node holding leases of its batches, most batches first. */
  held: Array<{ node: string; batches: number }>;
}

export interface NodeRecord {
  id: string;
  /** ISO-8601, by the database's clock. */
  startedAt: string;
  /** When it last renewed its leases (it does every lease/3 while it lives). */
  lastSeen: string;
  /** Batches whose lease it holds and has not passed. */
  batchesHeld: number;
}

export type JournalHealth = 'writable' | 'closed' | 'lost' | 'unreachable';

export interface StatusReads {
  unfinishedFileLines(): Awaitable<FileLine[]>;
  requestsFinishedSince(since: string): Awaitable<{ count: number; first: string | null }>;
  answersWithCodesSince(
    codes: readonly string[],
    since: string,
  ): Awaitable<Array<{ code: string; count: number }>>;
  numbersSettledSince(fileId: number, since: string): Awaitable<number>;
  inFlight(fileId: number): Awaitable<{ requests: number; numbers: number }>;
  lastAnswer(): Awaitable<
    { outcome: string | null; status_code: string | null; finished_at: string } | undefined
  >;
  oldestHeldFile(): Awaitable<HeldFile | undefined>;
  prunedFileCount(): Awaitable<number>;
  /**
   * The daemon's own record. `pid`: the process holding the data directory, whose record it is
   * when several daemons share the journal (PostgreSQL: each node has its own, the pause is the
   * account's); SQLite's one daemon has one.
   */
  daemonState(pid?: number): Awaitable<DaemonState | undefined>;
  size(): Awaitable<JournalSize>;
  /**
   * The daemons sharing the journal seen in the last `withinMs` or holding batches, the most
   * recently seen first; none with the SQLite journal (one server).
   */
  nodes(withinMs: number): Awaitable<NodeRecord[]>;
  /**
   * Which node reads each of these files (its claim not passed) and how many of their batches
   * each node holds now. Only a journal several nodes share has it.
   */
  fileNodes?(fileIds: readonly number[]): Awaitable<FileNodes[]>;
  /**
   * 'lost': a write failed and this process stops (JournalLostError); 'closed': closed;
   * 'unreachable': its database server does not answer now (PostgreSQL), which may pass.
   */
  health(): Awaitable<JournalHealth>;
}

export interface MetricsReads {
  filesByStatus(): Awaitable<Array<{ status: string; files: number }>>;
  rowsByStatus(): Awaitable<
    Record<'accepted' | 'failed' | 'unknown' | 'invalid' | 'duplicate' | 'pending', number>
  >;
  numbersByOutcome(): Awaitable<Array<{ outcome: string; code: string; numbers: number }>>;
  requestsByOutcome(): Awaitable<Array<{ outcome: string; requests: number }>>;
  sendRateByMinute(
    since: string,
  ): Awaitable<Array<{ minute: string; requests: number; accepted: number }>>;
  /** Numbers still to send: of every file, or of the files with these bytes. */
  numbersToSend(sha256s?: readonly string[]): Awaitable<number>;
  /**
   * Unfinished files that wait for their operator (ports/control.ts) at `now` (ISO 8601): held
   * for approval, scheduled (approved for a start time still ahead), paused. Only those waiting.
   */
  filesWaiting(now: string): Awaitable<Array<{ waiting: FileWaiting; files: number }>>;
}

/** What an unfinished file waits for, for /metrics. */
export type FileWaiting = 'held' | 'scheduled' | 'paused';

export interface ExportReads extends ResultReads {
  /** The file's rows in file order, of these statuses (all: none given). */
  recipients(fileId: number, statuses: readonly string[]): Pages<RecipientRow>;
  mostValues(fileId: number): Awaitable<number>;
  /** The file's groups still to send (the dry run's message preview). */
  groupsToSend(fileId: number): Pages<GroupToSend>;
  /** The journal's records of these bytes, and whether each was pruned. */
  recordsOfBytes(sha256: string): Awaitable<Array<{ id: number; pruned: boolean }>>;
  /** The suppression list as it is (a dry run plans without these numbers too). */
  suppressedNumbers(): Awaitable<SuppressedNumber[]>;
}

export type ReadStore = FileReads & StatusReads & MetricsReads & ExportReads;
