// The records the ports speak in: what a file, a batch, an attempt, a row of a report is. Both
// journals read and write them; callers take them from here (or from src/ports/index.ts).
import type { ErrorCode } from '../errors.js';
import type { BATCH_STATE, BatchState, Doubt, FileControl, FileStatus } from './states.js';

// A file: its journal record, its counts, its line of v_files (fileReads.ts, files.ts).
export interface FileRecord {
  id: number;
  sha256: string;
  generation: number;
  name: string;
  path: string | null;
  size: number;
  encoding: string;
  status: FileStatus;
  error: string | null;
  header: string | null;
  created_at: string;
  started_at: string | null;
  finished_at: string | null;
  /**
   * The daemon's last taking of these bytes from inbox/, when it continued this record (noteTaken).
   */
  taken_at: string | null;
  /** The provider and account it was planned for (see migration 12); null: not recorded. */
  provider: string | null;
  /** When its rows went (prune.ts): only this line and its counts are left. */
  pruned_at: string | null;
  /** An operator's hold (ports/control.ts): held, paused, cancelled; null: it goes. */
  control: FileControl | null;
  /** When a file free to go may start (ISO 8601; `approve --at`); null: at once. */
  start_at: string | null;
  /** Who set the control last ('cli', 'api', 'SMSDROP_APPROVAL'), and when. */
  control_by: string | null;
  control_at: string | null;
  /** How far it has been read, in bytes, while it is read (null: not recorded). */
  read_bytes: number | null;
  /** The time of its runs that ended, summed, in ms (journalRules/runs.ts). */
  run_ms: number;
  /** The start of the run going on, or of one cut off before its end; null: none. */
  run_started_at: string | null;
}

export interface FileCounts {
  rows: number;
  invalid: number;
  duplicates: number;
  /** Of the duplicates, the rows whose message another file sends their number (sentBefore.ts). */
  repeats: number;
  accepted: number;
  failed: number;
  unknown: number;
  /** Rows an operator's `smsdrop cancel` ended before they were requested. */
  cancelled: number;
  pending: number;
  requests: number;
}

/** A line of v_files. */
export interface FileLine extends FileCounts {
  id: number;
  name: string;
  sha256: string;
  status: string;
  started_at: string | null;
  finished_at: string | null;
  /** The file's control (FileRecord's). */
  control: FileControl | null;
  start_at: string | null;
}

export interface NewFile {
  sha256: string;
  name: string;
  path: string;
  size: number;
  encoding: string;
  /** The provider and account it is planned for (ProviderConnection.identity). */
  provider?: string;
  /** Held for approval (SMSDROP_APPROVAL): read and planned, nothing sent until approved. */
  held?: boolean;
}

/** The rows an unfinished intake kept (restartIntake), as two columns in line order. */
export interface KeptRows {
  lines: Int32Array;
  ids: Float64Array;
}

/** Another file that holds, not sent yet, rows this file left to it as repeats. */
export interface WaitingFile {
  id: number;
  name: string;
  /** This file's repeats of those rows. */
  rows: number;
  /** Its status: only a file read to the end (sending) can be resumed from the journal. */
  status: FileStatus;
  /**
   * Being read or sent now, in this process (the daemon's other file): it sends them as it goes on.
   */
  inProgress?: boolean;
}

// A batch, what sending it takes, where it goes after an attempt, what its attempts say
// (sendMoves.ts, sendReads.ts).
export interface BatchRecord {
  id: number;
  file_id: number;
  group_id: number;
  parent_id: number | null;
  req_id: string;
  numbers: number;
  state: BatchState;
  attempts: number;
  deferrals: number;
  maybe_sent: number;
  first_doubt_at: string | null;
  next_attempt_at: number;
  status_code: string | null;
  status_msg: string | null;
}

/** What a request for this batch needs. */
export interface BatchToSend {
  batch: BatchRecord;
  appId: string;
  templateId: string;
  datas: string[];
  /** The numbers, comma-separated, in row order. */
  phones: string;
}

/** Where a batch goes after an attempt. Decided by the sender, applied here in one transaction. */
export type Transition =
  | {
      to: 'accepted';
      statusCode: string;
      smsMessageSid: string | null;
      dateCreated: string | null;
      statusMsg?: string;
    }
  | { to: 'failed' | 'unknown'; statusCode: string | null; statusMsg: string }
  | {
      to: 'planned';
      nextAttemptAt: number;
      /** What may have reached the provider (DOUBT in states.ts). */
      doubt: Doubt;
      deferral?: boolean;
      /** The attempt does not count against the batch (it was not the batch's fault). */
      refundAttempt?: boolean;
      /**
       * None of its attempts count any more (they met an outage: see RetrySettings.providerSilent).
       */
      resetAttempts?: boolean;
      statusCode: string | null;
      statusMsg: string;
    }
  | { to: 'split'; statusCode: string; statusMsg: string };
export interface AttemptResult {
  outcome: string;
  statusCode: string | null;
  /** Why it ended so; null for an acceptance, whose smsMessageSid its batch keeps. */
  reason: string | null;
}

/** What a batch's attempts say of whether, and since when, it may have reached the provider. */
export interface AttemptHistory {
  /**
   * Every attempt carried the batch's reqId (one without it was a request the provider could not
   * recognise again).
   */
  everyAttemptCarriedReqId: boolean;
  /** An answer said "failed, but may have sent some" (the ambiguous class). */
  partial: boolean;
  /** When the first attempt that may have reached the provider started (null: none may have). */
  firstDoubtAt: string | null;
}

// What reports, exports and the status read (reportReads.ts, exportReads.ts, statusReads.ts).
export interface FailureCount {
  status: 'failed' | 'unknown';
  status_code: string | null;
  count: number;
  sample_message: string | null;
}

/** Rows of one template that give one number of values (valueCounts). */
export interface ValueCount {
  templateId: string;
  values: number;
  rows: number;
  firstLine: number;
}

/** A row of v_recipients as an export writes it. */
export interface RecipientRow {
  line: number;
  phone_raw: string;
  app_id: string | null;
  template_id: string | null;
  datas: string | null;
  extras: string | null;
  status: string;
  status_code: string | null;
  status_msg: string | null;
}

/** A group of the file still to send: its message, and the numbers its live batches hold. */
export interface GroupToSend {
  templateId: string;
  /** The values, as a JSON array. */
  datas: string;
  numbers: number;
}

/** A file whose rows the journal still holds: when it came, and when it ended (null: not yet). */
export interface HeldFile {
  id: number;
  name: string;
  status: string;
  created_at: string;
  finished_at: string | null;
}

// The daemon's own state (daemonState.ts).
export interface DaemonStateUpdate {
  /** Why sending is paused (e.g. "111142: account balance insufficient"); null when it is not. */
  paused: string | null;
  /** The pause's stable code (docs/errors.md), such as E_PROVIDER_BALANCE. */
  code?: ErrorCode;
  /** The daemon's process id. Default: this process. */
  pid?: number;
}

export interface DaemonState {
  pid: number | null;
  paused: string | null;
  /** The pause's stable code; null when not paused (or paused by a daemon that kept none). */
  paused_code: ErrorCode | null;
  /** When the current pause began (kept while the reason changes). */
  paused_since: string | null;
  /**
   * What requests wait for while sending is not paused (a message window used up); null: nothing.
   */
  waiting: string | null;
  updated_at: string;
}

// The journal's size on disk (storage.ts).
/** The journal's size: its files on disk, and how much of the database is free pages. */
export interface JournalSize {
  /** journal.sqlite, its -wal, and the intents file with its -wal, in bytes. */
  bytes: number;
  database: number;
  wal: number;
  intents: number;
  /** Bytes of free pages inside journal.sqlite. */
  free: number;
  /**
   * A journal on a database server: its size is the database's, with no WAL, intents or free
   * pages of smsdrop's to show.
   */
  server?: 'postgresql';
}

// The suppression list (suppression.ts).

export interface SuppressedNumber {
  phone: string;
  reason: string;
  /** Who suppressed it: "provider" (its answer), or "list" (smsdrop suppress). */
  source: string;
  addedAt: string;
}

// Retrying failed, unknown and cancelled rows (retry.ts).

/** The outcomes an operator may resend (cancelled: only when asked, `retry --cancelled`). */
export type RetryStatus =
  typeof BATCH_STATE.failed | typeof BATCH_STATE.unknown | typeof BATCH_STATE.cancelled;

export interface PreparedRetry {
  /**
   * Numbers (rows) resent: handed to new batches, or in unknown batches planned again as they are.
   */
  rows: number;
  /** The first new batch: later batches of the file are the others and their split halves (and,
   * for a file still in progress, halves of its other batches split meanwhile). */
  firstBatchId: number | null;
  /** Unknown batches planned again as they are, under their own reqId. */
  ownReqIdBatchIds: number[];
  /** Rows not resent: another file sent the same message to their number (see sentBefore.ts). */
  repeats: number;
}

/**
 * Whether an unknown batch may be sent again under its own reqId (send/policy.ts
 * mayResendWithOwnReqId), given what its attempts say (attemptHistory).
 */
export type KeepsOwnReqId = (history: AttemptHistory) => boolean;

/** How a retry treats unknown batches. */
export interface UnknownRule {
  keepsOwnReqId: KeepsOwnReqId;
  /**
   * Whether the others may go under new reqIds (the operator agreed); if not, they stay unknown.
   */
  newReqIds: boolean;
}

export interface RetryOutcome {
  rows: number;
  accepted: number;
  failed: number;
  unknown: number;
  pending: number;
}

// Pruning (prune.ts) and backups (backup.ts).

/** A file that pruning takes. */
export interface FileToPrune {
  id: number;
  name: string;
  sha256: string;
  status: string;
  finished_at: string;
}

/** What a file holds that pruning deletes. */
export interface PrunedRecords {
  rows: number;
  groups: number;
  batches: number;
  attempts: number;
}

/** What a step of pruning did. */
export type PruneStep = 'mark' | 'delete' | 'suppressed' | 'vacuum' | 'checkpoint';

export interface PruneOptions {
  /** Files that ended before this moment (ISO) are pruned. */
  endedBefore: string;
  dryRun?: boolean;
  /** Also forget suppressed numbers added before endedBefore. */
  suppressed?: boolean;
  /** Stops between steps (the daemon's shutdown). */
  signal?: AbortSignal;
  /**
   * Called after each step (the measuring script's hook): what it did, how long its own statements
   * took, and how long until its write was committed (with whatever else that commit carried).
   */
  onStep?: (what: PruneStep, ownMs: number, committedMs: number) => void;
}

export interface PruneResult {
  files: FileToPrune[];
  records: PrunedRecords;
  suppressed: number;
  /** The journal's files on disk before and after (the same for a dry run). */
  bytesBefore: number;
  bytesAfter: number;
  /** The WAL was emptied (false: a transaction or a reader held it; the next prune tries again). */
  checkpointed: boolean;
}

export interface BackupResult {
  journal: string;
  /**
   * The intents file's copy; undefined when the data directory had none (nothing was ever
   * deferred).
   */
  intents: string | undefined;
  bytes: number;
}

export type { SentBefore, SentBeforeLookup } from './plan.js';
