// A journal's tables as they are, read a page at a time: what `smsdrop migrate --to` reads from the
// SQLite journal (journal/tableDump.ts) and writes into an empty PostgreSQL one
// (pgjournal/copy.ts). The list of tables is the contract between the two.

/**
 * The tables copied, parents before the rows that refer to them (a batch's parent_id is an earlier
 * batch), and the primary key each is paged by. Not copied: SQLite's own bookkeeping
 * (schema_migrations, sqlite_sequence) and intents (put back into the journal before reading).
 */
export const DUMPED_TABLES = [
  ['files', ['id']],
  ['groups', ['id']],
  ['rows', ['id']],
  ['batches', ['id']],
  ['batch_numbers', ['batch_id']],
  ['attempts', ['id']],
  ['daemon_state', ['id']],
  ['suppressed', ['phone']],
  ['invalid_cells', ['row_id']],
  ['webhook_outbox', ['id']],
  ['pruned_totals', ['kind', 'outcome', 'code']],
] as const satisfies ReadonlyArray<readonly [string, readonly string[]]>;

export type DumpedTableName = (typeof DUMPED_TABLES)[number][0];

/** A table's values, row by row, in its columns' order; integers as bigint (exact past 2^53). */
export type DumpedRow = unknown[];

export interface DumpedTable {
  name: DumpedTableName;
  columns: string[];
  /** Its rows now (the caller holds the data directory's lock: nothing writes meanwhile). */
  count: number;
  /** Its rows in primary-key order, `size` at a time. */
  pages(size: number): Generator<DumpedRow[]>;
}

export interface TableDump {
  /** The file read. */
  file: string;
  tables(): DumpedTable[];
  close(): void;
}

/** What was copied: each table's rows, in the order copied. */
export type CopyCounts = Array<{ table: string; rows: number }>;
