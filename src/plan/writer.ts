// The planner's face to intake (planner.ts): the rows it takes, its options, and its verbs.
import type { GroupCounts } from '../intake/groupCounts.js';
import type { IntakeRow } from '../intake/row.js';
import type { Awaitable } from '../ports/awaitable.js';
import type { SeenNumbers } from './seenNumbers.js';
import type { IntakeCounts, SentBeforeLookup } from './store.js';

/**
 * A row as intake made it (see IntakeRow for the meaning of each field), or, with keptRowId, a
 * row an interrupted intake left in the journal, found again at its line (see restartIntake).
 */
export type RowToJournal = IntakeRow & { keptRowId?: number };

export interface PlannerOptions {
  maxPerRequest: number;
  /**
   * Called after closed batches (full, or their group ended) were released (due once the bulk
   * transaction commits).
   */
  onRelease?: () => void;
  /**
   * True while the senders wait for a batch to be released: until the group counts are in,
   * released batches are then committed at once (at most every ROWS_BETWEEN_EARLY_COMMITS rows),
   * not when the bulk transaction is full (plan/releaseNotices.ts).
   */
  sendersWaiting?: () => boolean;
  /**
   * Rows of this file already in the journal from an interrupted intake (counted, not rewritten).
   */
  rowsKept?: number;
  /**
   * The file's rows per group, counted while intake reads: a group's batch is released after its
   * last row.
   */
  groupCounts?: GroupCounts;
  /** The file's size: the filter of numbers already placed is sized for it (see SeenNumbers). */
  fileBytes?: number;
  /** The filter itself (tests give a tiny one, so that nearly every number is a doubt). */
  seenNumbers?: SeenNumbers;
  /** Other files' rows by message (journal/sentBefore.ts); none: every valid row is sent. */
  sentBefore?: SentBeforeLookup;
}

// Each verb is awaited once (a chunk at a time); on a store that answers at once it returns a
// plain value, and SyncRowWriter says so.
export interface RowWriter {
  /** Writes one chunk of rows, in the intake's bulk transaction. */
  write(rows: readonly RowToJournal[]): Awaitable<void>;
  /**
   * Writes the open batches and the file's counts, and commits. Call once, after the last chunk.
   */
  finish(): Awaitable<IntakeCounts>;
  /**
   * Reading stopped early (the file is refused): settles the doubts and writes the open batches'
   * numbers, releasing none; commits what the journal holds, whatever happened.
   */
  abandon(): Awaitable<void>;
}

/**
 * The planner on a store that answers at once (SQLite's), for a file of fewer rows than a page of
 * the doubts' look-up (journal/placedRows.ts, 20,000): nothing to await.
 */
export interface SyncRowWriter extends RowWriter {
  write(rows: readonly RowToJournal[]): void;
  finish(): IntakeCounts;
  abandon(): void;
}
