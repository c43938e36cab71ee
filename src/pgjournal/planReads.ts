// What the PostgreSQL plan store loads before a chunk or the settling of the doubts (see
// PlanStore.prepareChunk and prepareSettle): a few statements, each for the whole chunk.
import type pg from 'pg';
import type { PlacedKey } from '../ports/plan.js';
import { HELD } from './planWrites.js';

/** A group of the file as the store knows it, with its held batches (ascending ids). */
export interface GroupRecord {
  id: number;
  keyHash: number;
  appId: string;
  templateId: string;
  datasJson: string;
  held: number[];
}

interface GroupRow {
  id: number;
  key_hash: number;
  app_id: string;
  template_id: string;
  datas: string;
}

/**
 * The file's groups of these key hashes (or of these groups' hashes), with their held batches and
 * those batches' numbers.
 */
export async function loadGroups(
  db: pg.ClientBase,
  fileId: number,
  by: { hashes: number[] } | { ids: number[] },
): Promise<{ groups: GroupRecord[]; phones: Map<number, string[]> }> {
  const { rows } =
    'hashes' in by
      ? await db.query<GroupRow>(
          'SELECT id, key_hash, app_id, template_id, datas FROM groups WHERE file_id = $1 AND key_hash = ANY($2::bigint[]) ORDER BY id',
          [fileId, by.hashes],
        )
      : await db.query<GroupRow>(
          // every group of those groups' key hashes: findGroup then knows them all
          `SELECT id, key_hash, app_id, template_id, datas FROM groups WHERE file_id = $1
           AND key_hash IN (SELECT key_hash FROM groups WHERE id = ANY($2::bigint[])) ORDER BY id`,
          [fileId, by.ids],
        );
  const groups = new Map<number, GroupRecord>();
  for (const g of rows)
    groups.set(g.id, {
      id: g.id,
      keyHash: g.key_hash,
      appId: g.app_id,
      templateId: g.template_id,
      datasJson: g.datas,
      held: [],
    });
  const phones = new Map<number, string[]>();
  if (groups.size === 0) return { groups: [], phones };
  // Only a held batch can take more numbers: a released one may be on its way already.
  const held = await db.query<{ id: number; group_id: number; phones: string | null }>(
    `SELECT b.id, b.group_id, n.phones FROM batches b LEFT JOIN batch_numbers n ON n.batch_id = b.id
     WHERE b.group_id = ANY($1::bigint[]) AND b.state = 'planned' AND b.next_attempt_at = ${HELD}
     ORDER BY b.id`,
    [[...groups.keys()]],
  );
  for (const b of held.rows) {
    groups.get(b.group_id)!.held.push(b.id);
    phones.set(b.id, b.phones ? b.phones.split(',') : []);
  }
  return { groups: [...groups.values()], phones };
}

/** The reasons these numbers may not be sent, for those suppressed. */
export async function suppressedAmong(
  db: pg.ClientBase,
  phones: readonly string[],
): Promise<Map<string, string>> {
  const { rows } = await db.query<{
    phone: string;
    reason: string;
    source: string;
    added_at: string;
  }>('SELECT phone, reason, source, added_at FROM suppressed WHERE phone = ANY($1::text[])', [
    phones,
  ]);
  // Worded as SQLite's (journal/suppression.ts, suppressionCheck).
  return new Map(
    rows.map((s) => [s.phone, `suppressed (${s.source}, ${s.added_at.slice(0, 10)}): ${s.reason}`]),
  );
}

export async function anySuppressed(db: pg.ClientBase): Promise<boolean> {
  const { rows } = await db.query<{ any: boolean }>(
    'SELECT EXISTS (SELECT 1 FROM suppressed) AS any',
  );
  return rows[0]!.any;
}

export async function hasGroups(db: pg.ClientBase, fileId: number): Promise<boolean> {
  const { rows } = await db.query<{ any: boolean }>(
    'SELECT EXISTS (SELECT 1 FROM groups WHERE file_id = $1) AS any',
    [fileId],
  );
  return rows[0]!.any;
}

/**
 * The file's rows in batches whose (group, number) is one of `keys`, in id order: one pass over
 * the file's rows against a hash of the keys. The rows were just written, so the planner's
 * statistics may say the file has none, and a nested loop would scan them once per key.
 */
export async function placedRowsMatching(
  db: pg.ClientBase,
  fileId: number,
  keys: readonly PlacedKey[],
): Promise<Array<[rowId: number, groupId: number, phone: string]>> {
  await db.query('SET LOCAL enable_nestloop = off');
  const { rows } = await db.query<{ id: number; group_id: number; phone: string }>(
    `SELECT r.id, r.group_id, r.phone FROM rows r
       JOIN (SELECT DISTINCT * FROM unnest($2::bigint[], $3::text[])) AS k(group_id, phone)
         ON k.group_id = r.group_id AND k.phone = r.phone
       WHERE r.file_id = $1 AND r.intake = 'valid' AND r.batch_id IS NOT NULL
       ORDER BY r.id`,
    [fileId, keys.map((k) => k.groupId), keys.map((k) => k.phone)],
  );
  // (a failure rolls the transaction back, and the setting with it)
  await db.query('SET LOCAL enable_nestloop = on');
  return rows.map((r) => [r.id, r.group_id, r.phone]);
}
