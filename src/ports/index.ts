// The ports: what each stage needs of the journal, as interfaces, and the vocabulary they share.
export type { Awaitable, Pages } from './awaitable.js';
export * from './states.js';
export type * from './records.js';
export type * from './events.js';
export { WEBHOOK_EVENTS } from './events.js';
export type { AttemptStart, DueQuery, Outcome, SendStore, TakeOver } from './send.js';
export type { FileStore } from './files.js';
export type {
  ExportReads,
  FileReads,
  JournalHealth,
  MetricsReads,
  NodeRecord,
  ReadStore,
  StatusReads,
} from './reads.js';
export type * from './results.js';
export type { BusyFiles, Maintenance } from './maintenance.js';
export type { OutboxStore } from './outbox.js';
export type { SuppressionList } from './suppression.js';
export type { DaemonStateStore } from './daemonState.js';
export type {
  ControlAction,
  ControlCommand,
  ControlResult,
  ControlState,
  ControlStore,
} from './control.js';
export { freeToGo, waitingFor } from './control.js';
export type { RetryCounts, RetryStore } from './retry.js';
export type { AccountSlots, SlotRelease } from './account.js';
export type { JournalHandle, JournalReader } from './handle.js';
export type {
  ChunkNeeds,
  FileHeader,
  GroupKey,
  HeldBatch,
  IntakeCounts,
  PlacedKey,
  PlannedRow,
  PlanStore,
  RowIntake,
} from './plan.js';
export {
  type CopyCounts,
  DUMPED_TABLES,
  type DumpedRow,
  type DumpedTable,
  type DumpedTableName,
  type TableDump,
} from './tableDump.js';
