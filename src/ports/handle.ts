// A journal opened: every port of the one process that writes it (JournalHandle), or the reads of
// one that only looks (JournalReader). Both journals give these same shapes; src/journals/ opens
// them, and nothing past it asks which journal answered.
import type { AccountSlots } from './account.js';
import type { ControlStore } from './control.js';
import type { DaemonStateStore } from './daemonState.js';
import type { FileStore } from './files.js';
import type { Maintenance } from './maintenance.js';
import type { OutboxStore } from './outbox.js';
import type { ReadStore } from './reads.js';
import type { RetryCounts, RetryStore } from './retry.js';
import type { SendStore } from './send.js';
import type { SuppressionList } from './suppression.js';

export interface JournalHandle {
  send: SendStore;
  files: FileStore;
  reads: ReadStore;
  outbox: OutboxStore;
  suppression: SuppressionList;
  daemon: DaemonStateStore;
  retry: RetryStore;
  maintenance: Maintenance;
  /** An operator's hold on a file: approve, pause, resume, cancel. */
  control: ControlStore;
  /** The account's request slots, shared with other nodes (PostgreSQL); none with SQLite. */
  account?: AccountSlots;
  /**
   * Commits what requests recorded on intents alone, closes the journal, then releases what the
   * opener holds (the data directory's lock). A second call does nothing.
   */
  close(): Promise<void>;
}

/**
 * A read-only journal: its reads, what a retry would resend, a prune that only says what it would
 * delete, and close.
 */
export type JournalReader = ReadStore & {
  retry: RetryCounts;
  prune: Maintenance['prune'];
  close(): void;
};

/** A reader from a journal's read-only stores: its prune only says what it would delete. */
export function readerOf(
  reads: ReadStore,
  retry: RetryCounts,
  dryMaintenance: Maintenance,
  close: () => void,
): JournalReader {
  return { ...reads, retry, prune: (options, busy) => dryMaintenance.prune(options, busy), close };
}
