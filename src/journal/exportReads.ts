// What is read of a file's records row by row or group by group: the export's recipients, the dry
// run's message preview, and the records of a file's bytes that retention looks up.
import type { Journal } from './connection.js';
import { sql, sqlPluck } from './sql.js';
import { sqlList, UNSETTLED_STATES } from '../ports/states.js';
import type { GroupToSend, RecipientRow } from '../ports/records.js';

/** The most values any group of the file has. */
export function mostValues(db: Journal, fileId: number): number {
  return (
    (sqlPluck(db, 'SELECT max(json_array_length(datas)) FROM groups WHERE file_id = ?').get(
      fileId,
    ) as number | null) ?? 0
  );
}

/**
 * The file's rows in file order (rows_by_file keeps them in row id order: nothing is sorted), of
 * these statuses (all: none given).
 */
export function recipients(
  db: Journal,
  fileId: number,
  statuses: readonly string[],
): IterableIterator<RecipientRow> {
  const filter = statuses.length > 0 ? `AND status IN (${statuses.map(() => '?').join(', ')})` : '';
  return sql(
    db,
    `SELECT line, phone_raw, app_id, template_id, datas, extras, status, status_code, status_msg
     FROM v_recipients WHERE file_id = ? ${filter} ORDER BY row_id`,
  ).iterate(fileId, ...statuses) as IterableIterator<RecipientRow>;
}

/**
 * The file's groups with numbers still to send, in the order they were read (the dry run's message
 * preview).
 */
export function groupsToSend(db: Journal, fileId: number): IterableIterator<GroupToSend> {
  return sql(
    db,
    `SELECT g.template_id AS templateId, g.datas AS datas, sum(b.numbers) AS numbers
     FROM batches b JOIN groups g ON g.id = b.group_id
     WHERE b.file_id = ? AND b.state IN ${sqlList(UNSETTLED_STATES)}
     GROUP BY b.group_id ORDER BY b.group_id`,
  ).iterate(fileId) as IterableIterator<GroupToSend>;
}

/** The journal's records of these bytes, and whether each was pruned. */
export function recordsOfBytes(
  db: Journal,
  sha256: string,
): Array<{ id: number; pruned: boolean }> {
  const rows = sql(
    db,
    'SELECT id, pruned_at IS NOT NULL AS pruned FROM files WHERE sha256 = ?',
  ).all(sha256) as Array<{ id: number; pruned: number }>;
  return rows.map((r) => ({ id: r.id, pruned: r.pruned === 1 }));
}
