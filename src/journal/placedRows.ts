// Which of a file's doubts (plan/doubts.ts) its group already has in a batch: the one read that
// goes over all the file's rows, at the end of its intake. No index has rows by number (a unique
// one cost a third of intake's time), so the rows are read in id order against a temporary table
// of the doubts. A large file is read a page at a time, with a turn of the event loop between
// pages: in one go, a million rows held the thread for ~0.6 s, and every request in flight waited
// for its answer to be read (bench, 50 ms latency: the requests of those seconds took 93 ms).
import { setImmediate as nextTurn } from 'node:timers/promises';
import { connectionOf, insideOf, type Journal } from './connection.js';
import { fileRowSpan } from './rowSpan.js';
import type { PlacedKey } from '../plan/store.js';

/** A placed row matching a doubt: its id, group and number. */
export type PlacedRow = [rowId: number, groupId: number, phone: string];

/** Rows read between two turns of the event loop: ~10 ms of work. */
export const ROWS_PER_PAGE = 20_000;

/** The doubts as a temporary table, and a look-up of the file's placed rows by id range. */
function doubtKeys(db: Journal, fileId: number, keys: Iterable<PlacedKey>) {
  const connection = connectionOf(db);
  const table = insideOf(db).temporaryTableName(`doubt_keys_${fileId}`);
  connection.exec(
    `CREATE TEMP TABLE ${table} (group_id INTEGER NOT NULL, phone TEXT NOT NULL, PRIMARY KEY (group_id, phone)) WITHOUT ROWID`,
  );
  const addKey = connection.prepare(
    `INSERT OR IGNORE INTO temp.${table} (group_id, phone) VALUES (?, ?)`,
  );
  for (const key of keys) addKey.run(key.groupId, key.phone);
  const inRange = connection
    .prepare(
      `SELECT r.id, r.group_id, r.phone FROM rows r INDEXED BY rows_by_file
       WHERE r.file_id = ? AND r.id BETWEEN ? AND ? AND r.intake = 'valid' AND r.batch_id IS NOT NULL
         AND EXISTS (SELECT 1 FROM temp.${table} k WHERE k.group_id = r.group_id AND k.phone = r.phone)`,
    )
    .raw();
  return {
    between: (first: number, last: number) => inRange.all(fileId, first, last) as PlacedRow[],
    drop: () => connection.exec(`DROP TABLE temp.${table}`),
  };
}

/**
 * The file's placed rows matching `keys`: at once when its rows span less than a page of ids, else
 * a page at a time, with a turn of the event loop after each page.
 */
export function placedRows(
  db: Journal,
  fileId: number,
  keys: Iterable<PlacedKey>,
): PlacedRow[] | Promise<PlacedRow[]> {
  const span = fileRowSpan(db, fileId);
  if (span === undefined) return [];
  const lookup = doubtKeys(db, fileId, keys);
  if (span.last - span.first >= ROWS_PER_PAGE) return inPages(lookup, span);
  try {
    return lookup.between(span.first, span.last);
  } finally {
    lookup.drop();
  }
}

async function inPages(
  lookup: ReturnType<typeof doubtKeys>,
  span: { first: number; last: number },
): Promise<PlacedRow[]> {
  try {
    const placed: PlacedRow[] = [];
    for (let first = span.first; first <= span.last; first += ROWS_PER_PAGE) {
      for (const row of lookup.between(first, first + ROWS_PER_PAGE - 1)) placed.push(row);
      await nextTurn();
    }
    return placed;
  } finally {
    lookup.drop();
  }
}
