// The statements of the doubts' look-up (placedRows.ts), for whichever connection runs it: the
// journal's own, or that of its thread (checkpointWorker.ts). A temporary table belongs to the
// connection that made it, so each side makes its own under the name it is given.
import type Database from 'better-sqlite3';
import { SmsdropError } from '../errors.js';
import type { PlacedRow } from './connection.js';

export type { PlacedRow };

/** A doubt's group and number, as the look-up's table holds them. */
export type DoubtKey = [groupId: number, phone: string];

/** Only names the journal made (temporaryTableName): they are spliced into the SQL. */
const TABLE_NAME = /^[a-z_][a-z0-9_]*$/;

/** The look-up on `connection`: the doubts' table made and filled, and the statement over it. */
export function keysTable(connection: Database.Database, table: string) {
  if (!TABLE_NAME.test(table)) throw new SmsdropError('E_INTERNAL', `not a table name: ${table}`);
  connection.exec(
    `CREATE TEMP TABLE ${table} (group_id INTEGER NOT NULL, phone TEXT NOT NULL, PRIMARY KEY (group_id, phone)) WITHOUT ROWID`,
  );
  const addKey = connection.prepare(
    `INSERT OR IGNORE INTO temp.${table} (group_id, phone) VALUES (?, ?)`,
  );
  const inRange = connection
    .prepare(
      `SELECT r.id, r.group_id, r.phone FROM rows r INDEXED BY rows_by_file
       WHERE r.file_id = ? AND r.id BETWEEN ? AND ? AND r.intake = 'valid' AND r.batch_id IS NOT NULL
         AND EXISTS (SELECT 1 FROM temp.${table} k WHERE k.group_id = r.group_id AND k.phone = r.phone)`,
    )
    .raw();
  return {
    add: (keys: Iterable<DoubtKey>) => {
      for (const [groupId, phone] of keys) addKey.run(groupId, phone);
    },
    between: (fileId: number, first: number, last: number) =>
      inRange.all(fileId, first, last) as PlacedRow[],
    drop: () => connection.exec(`DROP TABLE temp.${table}`),
  };
}

/** What the journal's thread is asked, one page at a time (placedRows.ts). */
export type PlacedRowsRequest =
  | { op: 'keys'; table: string; keys: DoubtKey[] }
  | { op: 'between'; table: string; fileId: number; first: number; last: number }
  | { op: 'drop'; table: string };

/** The thread's answer: the rows of a page (none for the other requests), or why it failed. */
export type PlacedRowsAnswer = { id: number; rows: PlacedRow[] } | { id: number; error: string };
