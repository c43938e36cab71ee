// Writing a file's rows into the journal, a chunk per transaction (journalling a million rows
// takes seconds, not minutes). Each valid row joins its group (app, template, values); the same
// number twice in a group is kept once, and the repeats are recorded as duplicates of it.
import { hash } from 'node:crypto';
import { type Db, nowIso, sql } from './open.js';
import { ROW_STATUS } from './states.js';

export interface RowToJournal {
  line: number;
  phoneRaw: string;
  phone?: string;
  appId?: string;
  templateId?: string;
  datas: string[];
  extras: Record<string, string>;
  error?: string;
}

export interface GroupRecord {
  id: number;
  file_id: number;
  app_id: string;
  template_id: string;
  datas: string;
}

/** Keeps the most recently used groups in memory; the journal holds them all. */
const GROUP_CACHE_SIZE = 20_000;

export interface RowWriter {
  /** Writes one chunk of rows in one transaction. */
  write(rows: readonly RowToJournal[]): void;
}

export function createRowWriter(db: Db, fileId: number): RowWriter {
  const groupIds = new Map<string, number>();
  const insertRow = sql(
    db,
    `INSERT OR IGNORE INTO rows (file_id, line, phone_raw, phone, group_id, status, error, extras, updated_at)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
  );
  const insertDuplicate = sql(
    db,
    `INSERT INTO rows (file_id, line, phone_raw, phone, group_id, status, duplicate_of, extras, updated_at)
     VALUES (?, ?, ?, ?, ?, 'duplicate',
       (SELECT id FROM rows WHERE group_id = ? AND phone = ? AND status <> 'duplicate' AND status <> 'invalid'), ?, ?)`,
  );
  const findGroups = sql(db, 'SELECT * FROM groups WHERE file_id = ? AND key_hash = ?');
  const insertGroup = sql(db, 'INSERT INTO groups (file_id, key_hash, app_id, template_id, datas) VALUES (?, ?, ?, ?, ?)');

  function groupIdOf(appId: string, templateId: string, datas: string[]): number {
    const datasJson = JSON.stringify(datas);
    const key = `${appId}\u0000${templateId}\u0000${datasJson}`;
    const cached = groupIds.get(key);
    if (cached !== undefined) return cached;
    // 48 bits of MD5 narrow the search; the full values are compared, so a collision is harmless.
    const keyHash = parseInt(hash('md5', key).slice(0, 12), 16);
    const candidates = findGroups.all(fileId, keyHash) as GroupRecord[];
    const found = candidates.find((g) => g.app_id === appId && g.template_id === templateId && g.datas === datasJson);
    const id = found ? found.id : Number(insertGroup.run(fileId, keyHash, appId, templateId, datasJson).lastInsertRowid);
    if (groupIds.size >= GROUP_CACHE_SIZE) groupIds.delete(groupIds.keys().next().value as string);
    groupIds.set(key, id);
    return id;
  }

  const writeChunk = db.transaction((rows: readonly RowToJournal[]) => {
    const now = nowIso();
    for (const row of rows) {
      const extras = hasKeys(row.extras) ? JSON.stringify(row.extras) : null;
      const groupId = row.appId !== undefined && row.templateId !== undefined ? groupIdOf(row.appId, row.templateId, row.datas) : null;
      if (row.error !== undefined || !row.phone || groupId === null) {
        // Kept with its group when it has one, so the rejected file can show its values.
        const reason = row.error ?? 'row has no phone number, appId or templateId';
        insertRow.run(fileId, row.line, row.phoneRaw, row.phone ?? null, groupId, ROW_STATUS.invalid, reason, extras, now);
        continue;
      }
      const inserted = insertRow.run(fileId, row.line, row.phoneRaw, row.phone, groupId, ROW_STATUS.pending, null, extras, now);
      if (inserted.changes === 0) insertDuplicate.run(fileId, row.line, row.phoneRaw, row.phone, groupId, groupId, row.phone, extras, now);
    }
  });

  return { write: (rows) => writeChunk(rows) };
}

function hasKeys(record: Record<string, string>): boolean {
  for (const _ in record) return true;
  return false;
}
