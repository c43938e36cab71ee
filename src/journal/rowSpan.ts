// The span of row ids a file's rows lie in: the pages its long reads go by (the result file, the
// doubts' look-up). A file's rows are written together, so the span holds few others.
import type { Journal } from './connection.js';
import { sqlPluck } from './sql.js';

/**
 * The first and last row ids of the file (undefined: it has no rows). Two statements: each is one
 * step down the file's index, where min and max in one statement read all of it, with the thread
 * held.
 */
export function fileRowSpan(
  db: Journal,
  fileId: number,
): { first: number; last: number } | undefined {
  const end = (which: 'min' | 'max') =>
    sqlPluck(db, `SELECT ${which}(id) FROM rows WHERE file_id = ?`).get(fileId) as number | null;
  const first = end('min');
  const last = end('max');
  return first === null || last === null ? undefined : { first, last };
}
