// The records the ports speak in: what a file, a batch, an attempt, a row of a report is. Each
// is defined where the journal writes it today and only named here (types only); callers outside
// the journal take them from here (or from src/ports/index.ts).
export type { FileCounts, FileRecord, KeptRows, NewFile, WaitingFile } from '../journal/files.js';
export type {
  AttemptHistory,
  AttemptResult,
  BatchRecord,
  BatchToSend,
  Transition,
} from '../journal/batches.js';
export type {
  FailureCount,
  FileLine,
  GroupToSend,
  HeldFile,
  RecipientRow,
  ValueCount,
} from '../journal/reads.js';
export type { EventBody, FileAside, OutboxRow, WebhookEvent } from '../journal/outbox.js';
export type { DaemonState, DaemonStateUpdate } from '../journal/daemonState.js';
export type { SuppressedNumber } from '../journal/suppressed.js';
export type { JournalSize } from '../journal/storage.js';
export type {
  KeepsOwnReqId,
  PreparedRetry,
  RetryOutcome,
  RetryStatus,
  UnknownRule,
} from '../journal/retry.js';
export type {
  FileToPrune,
  PrunedRecords,
  PruneOptions,
  PruneResult,
  PruneStep,
} from '../journal/prune.js';
export type { BackupResult } from '../journal/backup.js';
export type { SentBefore, SentBeforeLookup } from '../plan/store.js';
