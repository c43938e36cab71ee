// What the planner needs of the journal, and nothing else (a port): small storage verbs for one
// file's rows, groups and batches, and the bulk transaction they are written in. The planner
// (src/plan/) decides; the store only reads and writes what it is told. Both journals implement
// it (journal/planStore.ts, pgjournal/planStore.ts); the planner's own tests use a fake kept in
// memory.
//
// The verbs the planner calls per row answer at once. A journal on a server (PostgreSQL) cannot:
// it loads what a chunk's rows will ask before the chunk (prepareChunk, prepareSettle), reserves
// ids in blocks, and buffers its writes until a commit, so only those few verbs are awaited, once
// per chunk at most. The SQLite journal answers at once and has no prepare verbs.
import type { Awaitable } from './awaitable.js';

/**
 * Bits of a group's keyHash. 28 narrow the search among the repeat window's groups (a few
 * million: a look-up meets another group's hash about once in a hundred), and the full values are
 * then compared, so a collision is harmless. Under 2^31, SQLite keeps it in 4 bytes.
 */
export const KEY_HASH_BITS = 28;

/**
 * A group's identity as the journal stores it: ids, values as JSON, and a hash to look it up by.
 */
export interface GroupKey {
  appId: string;
  templateId: string;
  datasJson: string;
  /** The first KEY_HASH_BITS of the MD5 of the group's key (plan/groups.ts). */
  keyHash: number;
}

/** What intake decided about a row. */
export type RowIntake = 'valid' | 'invalid' | 'duplicate';

/** A row's columns, in the order the journal writes them (the file is the store's own). */
export type PlannedRow = [
  line: number,
  phoneRaw: string,
  phone: string | null,
  groupId: number | null,
  intake: RowIntake,
  error: string | null,
  extras: string | null,
  batchId: number | null,
  /** A repeat of another file's row: that row. */
  duplicateOf: number | null,
];

/** A file's rows, invalid rows and duplicates, of which `repeats` repeat another file's rows. */
export interface IntakeCounts {
  rows: number;
  invalid: number;
  duplicates: number;
  repeats: number;
}

/** An earlier file's rows of one message: which row, if any, has a number. */
export interface SentBefore {
  /** The id of an earlier row with this number (in another file), or undefined. */
  rowOf(phone: string): number | undefined;
}

/**
 * The earlier rows of a group's message, or undefined when no earlier file has it (the repeat
 * window: the journal answers it, the planner asks it once per group).
 */
export interface SentBeforeLookup {
  (keyHash: number, appId: string, templateId: string, datasJson: string): SentBefore | undefined;
  /**
   * Loads the answers for these groups, so that asking for them then answers at once (a journal
   * on a server). Absent: every answer is at hand.
   */
  prepare?(keys: readonly GroupKey[]): Awaitable<void>;
  /**
   * Loads the answers of rowOf for these numbers, each of the message whose answer it is paired
   * with (a journal on a server; the answers of the numbers asked before are forgotten). Absent:
   * rowOf answers at once.
   */
  prepareNumbers?(asks: ReadonlyArray<readonly [SentBefore, string]>): Awaitable<void>;
}

/** What a chunk's rows will ask of the store (see PlanStore.prepareChunk). */
export interface ChunkNeeds {
  /** Rows in the chunk (each may take a row id, a batch id, and a group id). */
  rows: number;
  /** The groups of the chunk the planner does not hold (findGroup, heldBatchOf, insertGroup). */
  groups: readonly GroupKey[];
  /** The chunk's numbers (whySuppressed). */
  phones: readonly string[];
}

/** A doubt's group and number (see PlanStore.placedRowsMatching). */
export interface PlacedKey {
  groupId: number;
  phone: string;
}

/** The file's header as intake read it: its columns, and those it keeps as extras. */
export interface FileHeader {
  columns: string[];
  extras: string[];
}

/** A group's batch still taking numbers, as the journal has it. */
export interface HeldBatch {
  id: number;
  phones: string[];
}

export interface PlanStore {
  /**
   * Before a chunk is planned: loads what its synchronous calls will ask, and reserves the ids it
   * may take. Absent: the store answers every call at once.
   */
  prepareChunk?(needs: ChunkNeeds): Awaitable<void>;
  /**
   * Before the doubts are settled (the end of the file, or a refusal): placedRowsMatching for
   * these, and their groups (groupValues, findGroup, heldBatchOf), and ids for a batch each.
   */
  prepareSettle?(doubts: readonly PlacedKey[]): Awaitable<void>;
  /**
   * True when senders see a released batch only once its transaction commits (they read through
   * other connections): the planner tells of releases after the commit, not at once.
   */
  readonly releasesSeenAtCommit?: boolean;
  /** The file's header, once read (before its first row). */
  saveHeader(header: FileHeader): void;
  // Rows, in the file's order: a row's id is known once it is written (onId), before the chunk
  // ends.
  addRow(row: PlannedRow, onId?: (rowId: number) => void): void;
  /** Writes the rows added so far, so they come before whatever is written next. */
  flushRows(): void;
  /** Forgets the rows added but not yet written (their chunk failed). */
  dropRows(): void;
  /**
   * An interrupted intake's row, found again at its line: it moves between the rows before and
   * after.
   */
  moveKeptRow(rowId: number): void;
  /** The numbers, by group, of the rows an interrupted intake left in batches. */
  keptNumbers(): Iterable<[groupId: number, phone: string]>;
  /** An invalid row's cells as read, for the rejected file. */
  keepInvalidCells(rowId: number, cells: readonly string[]): void;
  /** Why a number may not be sent (suppressed), or undefined. */
  whySuppressed(phone: string): string | undefined;
  markDuplicate(rowId: number, duplicateOf: number): void;
  setRowBatch(rowId: number, batchId: number): void;
  /** The file's rows in batches whose (group, number) is one of `keys`: [rowId, groupId, phone]. */
  placedRowsMatching(
    keys: Iterable<PlacedKey>,
  ): Array<[rowId: number, groupId: number, phone: string]>;

  /** The file's group with this key, if the journal has it. */
  findGroup(key: GroupKey): number | undefined;
  insertGroup(key: GroupKey): number;
  /** A group's ids and values (to load it again by its key). */
  groupValues(groupId: number): { appId: string; templateId: string; datas: string[] };

  /**
   * The group's latest batch still held (not yet released): the only one that may take more
   * numbers.
   */
  heldBatchOf(groupId: number): HeldBatch | undefined;
  /** A new empty batch of the group, held; `now` is its creation time. */
  insertBatch(groupId: number, now: string): number;
  /**
   * The batch's numbers, each that of a row placed in it (written with its batch id): a journal
   * may keep a batch of one number in its row alone (SQLite).
   */
  saveBatchNumbers(batchId: number, phones: readonly string[]): void;
  /** The batch takes no more numbers: it is due now. */
  releaseBatch(batchId: number): void;
  /** The end of the file: every batch of it still held is due now. */
  releaseHeldBatches(): void;
  /** These batches go before the file's other due batches. */
  sendFirst(batchIds: Iterable<number>): void;
  finishIntakeCounts(counts: IntakeCounts): void;

  /**
   * Whether a batch may be released only once a commit holds it (requests' commits are deferred).
   */
  readonly releaseOnlyCommitted: boolean;
  /** Commits so far: what was written before the count moved is in the journal for good. */
  commits(): number;
  /**
   * Runs `write` (of `rows` rows, synchronously) in the open bulk transaction, committing when it
   * is large enough: awaited, the commit is done.
   */
  writeInBulk(rows: number, write: () => void): Awaitable<void>;
  commit(): Awaitable<void>;
  /** True when rows this store wrote were rolled back with a bulk transaction. */
  rowsLost(): boolean;
  /** Throws when rowsLost(). */
  assertNothingLost(): void;
}
