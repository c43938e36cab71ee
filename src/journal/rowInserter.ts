// Intake's rows go into the journal many to a statement. better-sqlite3 binds and steps each
// run() call on its own, and for a narrow row that call costs about as much as SQLite storing it
// (docs/benchmark-history.md, "rows many to a statement"). Rows wait in a queue until
// ROWS_PER_STATEMENT of them are there; the planner flushes the rest at the end of each chunk and
// before any other write of rows, so ids still follow the file's order.
import type { Journal } from './connection.js';
import { type Query, sql } from './sql.js';
import { RAW_IS_PHONE } from './storedForms.js';

/** A row's columns, in INSERT order, but for its file (the inserter's own). */
export type RowValues = [
  line: number,
  phoneRaw: string,
  phone: string | null,
  groupId: number | null,
  intake: string,
  error: string | null,
  extras: string | null,
  batchId: number | null,
  /**
   * A repeat of another file's row: that row (sentBefore.ts). Repeats within the file are marked
   * when doubts are settled.
   */
  duplicateOf: number | null,
];

const COLUMNS =
  'file_id, line, phone_raw, phone, group_id, intake, error, extras, batch_id, duplicate_of';
/** Bound per row: the file's id, then RowValues. */
const COLUMN_COUNT = 10;
/** Rows per statement: past ~50 the gain flattens (100 rows: the same 1.43 s). */
export const ROWS_PER_STATEMENT = 50;

export interface RowInserter {
  /**
   * Queues a row (written once ROWS_PER_STATEMENT are queued); `onId`, if given, is told its id
   * when it is written.
   */
  add(values: RowValues, onId?: (rowId: number) => void): void;
  /** Writes the rows still queued, so that they come before whatever is written next. */
  flush(): void;
  /** Forgets the queued rows (their chunk failed: they are not in the journal). */
  drop(): void;
}

/** The two INSERTs of rows: one row, and ROWS_PER_STATEMENT rows. */
function rowInserts(db: Journal): { insertOne: Query; insertMany: Query } {
  const tuple = `(${Array(COLUMN_COUNT).fill('?').join(', ')})`;
  return {
    insertOne: sql(db, `INSERT INTO rows (${COLUMNS}) VALUES ${tuple}`),
    insertMany: sql(
      db,
      `INSERT INTO rows (${COLUMNS}) VALUES ${Array(ROWS_PER_STATEMENT).fill(tuple).join(', ')}`,
    ),
  };
}

export function createRowInserter(db: Journal, fileId: number): RowInserter {
  const { insertOne, insertMany } = rowInserts(db);
  const values: unknown[] = new Array(ROWS_PER_STATEMENT * COLUMN_COUNT);
  /** Callbacks waiting for ids, with the row's place in the queue. */
  const waiting: Array<{ at: number; onId: (rowId: number) => void }> = [];
  let queued = 0;

  /** Forgets the queued rows and their askers: after a write, or instead of one. */
  function drop(): void {
    queued = 0;
    waiting.length = 0;
  }

  /**
   * A table without AUTOINCREMENT gives each new row the largest rowid + 1, so the rows of one
   * statement get consecutive ids ending at lastInsertRowid.
   */
  function report(lastId: number, count: number): void {
    for (const { at, onId } of waiting) onId(lastId - (count - 1 - at));
  }

  function writeAll(): void {
    try {
      report(Number(insertMany.run(values).lastInsertRowid), ROWS_PER_STATEMENT);
    } finally {
      drop();
    }
  }

  function writeQueued(): void {
    try {
      let lastId = 0;
      for (let row = 0; row < queued; row++)
        lastId = Number(
          insertOne.run(values.slice(row * COLUMN_COUNT, (row + 1) * COLUMN_COUNT)).lastInsertRowid,
        );
      report(lastId, queued);
    } finally {
      drop();
    }
  }

  return {
    add(row, onId) {
      if (onId) waiting.push({ at: queued, onId });
      const base = queued * COLUMN_COUNT;
      values[base] = fileId;
      for (let i = 1; i < COLUMN_COUNT; i++) values[base + i] = row[i - 1];
      if (row[1] === row[2]) values[base + 2] = RAW_IS_PHONE; // the number once (storedForms.ts)
      if (++queued === ROWS_PER_STATEMENT) writeAll();
    },
    flush() {
      if (queued > 0) writeQueued();
    },
    drop,
  };
}
