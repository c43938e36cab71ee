// A small journal's content, written as plain rows into both journals (SQLite's and PostgreSQL's)
// so that their views can be compared: every status a row can end in, a split batch with its
// halves, repeats of another file's row and of a row gone since, a file in intake and a pruned one.
import { STORED_TIME_PARAM } from '../sqliteFile.js';

type Value = string | number | null;
type Row = Record<string, Value>;

const AT = '2026-11-27T05:00:00.000Z';
const file = (id: number, name: string, status: string, more: Row = {}): Row => ({
  id,
  sha256: `sha${id}`,
  name,
  size: 100,
  encoding: 'utf-8',
  status,
  created_at: AT,
  ...more,
});
const group = (id: number, fileId: number, datas: string): Row => ({
  id,
  file_id: fileId,
  key_hash: id * 11,
  app_id: 'app',
  template_id: '1',
  datas,
});
const batch = (
  id: number,
  fileId: number,
  groupId: number,
  state: string,
  more: Row = {},
): Row => ({
  id,
  file_id: fileId,
  group_id: groupId,
  req_id: `req${id}`,
  numbers: 1,
  state,
  created_at: AT,
  updated_at: AT,
  ...more,
});
const row = (id: number, fileId: number, line: number, intake: string, more: Row = {}): Row => ({
  id,
  file_id: fileId,
  line,
  phone_raw: `1380000000${id}`,
  phone: intake === 'invalid' ? null : `1380000000${id}`,
  intake,
  ...more,
});
const attempt = (id: number, batchId: number): Row => ({
  id,
  batch_id: batchId,
  req_id: `req${batchId}`,
  started_at: AT,
  finished_at: AT,
  outcome: 'accepted',
});

export const SAMPLE: ReadonlyArray<readonly [string, readonly Row[]]> = [
  [
    'files',
    [
      file(1, 'a.csv', 'sending', { rows: 8, invalid: 1, duplicates: 3, repeats: 1 }),
      file(2, 'b.csv', 'done', { rows: 1, started_at: AT, finished_at: AT }),
      file(3, 'c.csv', 'intake'),
      file(4, 'd.csv', 'done', {
        rows: 9,
        pruned_at: AT,
        kept_accepted: 7,
        kept_failed: 1,
        kept_unknown: 1,
        kept_pending: 0,
        kept_requests: 3,
      }),
    ],
  ],
  ['groups', [group(1, 1, '["x"]'), group(2, 1, '["y"]'), group(3, 2, '["z"]'), group(4, 3, '[]')]],
  [
    'batches',
    [
      batch(1, 1, 1, 'split', { numbers: 2, maybe_sent: 0 }),
      batch(2, 1, 1, 'accepted', {
        parent_id: 1,
        status_code: '000000',
        sms_message_sid: 'sid2',
        date_created: '20261127130000',
      }),
      batch(3, 1, 1, 'failed', { parent_id: 1, status_code: '160040', status_msg: 'blocked' }),
      batch(4, 1, 2, 'planned'),
      batch(5, 2, 3, 'unknown', { status_msg: 'no answer' }),
      batch(6, 1, 2, 'failed', { numbers: 2, status_code: '160040', status_msg: 'also' }),
    ],
  ],
  [
    'rows',
    [
      row(1, 1, 2, 'valid', { group_id: 1, batch_id: 2, extras: '{"name":"A"}' }),
      row(2, 1, 3, 'valid', { group_id: 1, batch_id: 3 }),
      row(3, 1, 4, 'invalid', { error: 'not a phone number' }),
      row(4, 1, 5, 'duplicate', { group_id: 1, duplicate_of: 1 }),
      row(5, 1, 6, 'valid', { group_id: 2, batch_id: 4 }),
      row(6, 2, 2, 'valid', { group_id: 3, batch_id: 5 }),
      row(7, 1, 7, 'duplicate', { group_id: 3, duplicate_of: 6 }),
      row(8, 1, 8, 'duplicate', { group_id: 1, duplicate_of: 999 }),
      row(9, 3, 2, 'valid', { group_id: 4 }),
      row(10, 1, 9, 'valid', { group_id: 2, batch_id: 6 }),
    ],
  ],
  ['attempts', [attempt(1, 1), attempt(2, 2), attempt(3, 3), attempt(4, 3), attempt(5, 5)]],
];

/** INSERT INTO table (columns) VALUES (?, ...) for SQLite, ($1, ...) for PostgreSQL. */
/** The columns SQLite keeps as milliseconds (Dialect.storedTime); the sample gives them as text. */
const STORED_TIMES: Record<string, readonly string[]> = {
  attempts: ['started_at', 'finished_at'],
  batches: ['created_at', 'updated_at'],
};

export function insertSql(table: string, row: Row, dialect: 'sqlite' | 'pg'): string {
  const columns = Object.keys(row);
  const sqliteParam = (column: string) =>
    STORED_TIMES[table]?.includes(column) ? STORED_TIME_PARAM : '?';
  const params = columns.map((c, i) => (dialect === 'sqlite' ? sqliteParam(c) : `$${i + 1}`));
  return `INSERT INTO ${table} (${columns.join(', ')}) VALUES (${params.join(', ')})`;
}
