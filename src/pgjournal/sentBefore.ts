// The repeat window on the PostgreSQL journal: other files' rows of a message, as the SQLite
// journal finds them (journal/sentBefore.ts: read there which rows count and why). The planner asks
// once per group, synchronously: the window's groups (key hash and id) are read when the look-up is
// made, so a group no other file has is answered at once; the rows of the groups that match are
// loaded by prepare, a chunk's groups in one statement, before the chunk is planned.
import type pg from 'pg';
import type { RepeatWindow } from '../config/settings/durations.js';
import { SmsdropError } from '../errors.js';
import type { GroupKey, SentBefore, SentBeforeLookup } from '../plan/store.js';
import { BATCH_STATE, sqlList, UNSETTLED_STATES } from '../ports/states.js';

/** Batches whose rows count, for `b` joined to its file `f`; $2 is the window's start. */
const COUNTS = `(b.state = 'sending'
  OR (b.state = 'planned' AND (f.status = 'sending' OR b.parent_id IS NOT NULL OR EXISTS (SELECT 1 FROM attempts a WHERE a.batch_id = b.id)))
  OR (b.state IN ${sqlList([BATCH_STATE.accepted, BATCH_STATE.unknown])} AND EXISTS (SELECT 1 FROM attempts a WHERE a.batch_id = b.id AND a.started_at >= $2)))`;

/** Another file's group in the window, its values known once prepare read them. */
interface WindowGroup {
  id: number;
  values?: string;
}

/**
 * The look-up for intake of file `fileId` (its own rows never count), or undefined when the window
 * is off or no other file has a row in it.
 */
export async function pgSentBeforeLookup(
  db: pg.Pool,
  fileId: number,
  window: RepeatWindow,
  now = Date.now(),
): Promise<SentBeforeLookup | undefined> {
  if (window.ms <= 0) return undefined;
  const since = new Date(now - window.ms).toISOString();
  const { rows } = await db.query<{ key_hash: number; id: number }>(
    `SELECT g.key_hash, g.id FROM groups g WHERE g.file_id != $1 AND g.id IN (
       SELECT b.group_id FROM attempts a JOIN batches b ON b.id = a.batch_id WHERE a.started_at >= $2
       UNION
       SELECT b.group_id FROM files f JOIN batches b ON b.file_id = f.id
       WHERE f.status != 'done' AND b.state IN ${sqlList(UNSETTLED_STATES)})`,
    [fileId, since],
  );
  if (rows.length === 0) return undefined;
  const byHash = new Map<number, WindowGroup[]>();
  for (const g of rows) {
    const list = byHash.get(g.key_hash);
    if (list) list.push({ id: g.id });
    else byHash.set(g.key_hash, [{ id: g.id }]);
  }
  /** Answers by message (values as valuesOf), once prepared. */
  const answers = new Map<string, SentBefore | undefined>();
  const lookup: SentBeforeLookup = (keyHash, appId, templateId, datasJson) => {
    if (!byHash.has(keyHash)) return undefined;
    const key = valuesOf(appId, templateId, datasJson);
    if (!answers.has(key))
      throw new SmsdropError('E_INTERNAL', 'the repeat window was asked for a group not prepared');
    return answers.get(key);
  };
  lookup.prepare = async (keys: readonly GroupKey[]) => {
    const asked = keys.filter(
      (k) => byHash.has(k.keyHash) && !answers.has(valuesOf(k.appId, k.templateId, k.datasJson)),
    );
    if (asked.length === 0) return;
    await readValues(db, asked, byHash);
    const matching = new Map<string, number[]>();
    for (const k of asked) {
      const values = valuesOf(k.appId, k.templateId, k.datasJson);
      const ids = byHash
        .get(k.keyHash)!
        .filter((g) => g.values === values)
        .map((g) => g.id);
      matching.set(values, ids);
    }
    const numbers = await numbersOf(db, [...new Set([...matching.values()].flat())], since);
    for (const [values, ids] of matching) answers.set(values, sentBeforeOf(ids, numbers));
  };
  return lookup;
}

function valuesOf(appId: string, templateId: string, datasJson: string): string {
  return JSON.stringify([appId, templateId, datasJson]);
}

/** Reads the values of the window's groups of these keys' hashes, those not read yet. */
async function readValues(
  db: pg.Pool,
  keys: readonly GroupKey[],
  byHash: Map<number, WindowGroup[]>,
): Promise<void> {
  const unread = keys.flatMap((k) => byHash.get(k.keyHash)!.filter((g) => g.values === undefined));
  if (unread.length === 0) return;
  const { rows } = await db.query<{
    id: number;
    app_id: string;
    template_id: string;
    datas: string;
  }>('SELECT id, app_id, template_id, datas FROM groups WHERE id = ANY($1::bigint[])', [
    unread.map((g) => g.id),
  ]);
  const values = new Map(rows.map((g) => [g.id, valuesOf(g.app_id, g.template_id, g.datas)]));
  for (const g of unread) g.values = values.get(g.id) ?? '';
}

/** The counted rows of these groups: by group, each number's first row. */
async function numbersOf(
  db: pg.Pool,
  groupIds: number[],
  since: string,
): Promise<Map<number, Map<string, number>>> {
  const byGroup = new Map<number, Map<string, number>>();
  if (groupIds.length === 0) return byGroup;
  const { rows } = await db.query<{ group_id: number; phone: string; id: number }>(
    `SELECT b.group_id, r.phone, r.id FROM batches b JOIN files f ON f.id = b.file_id
       JOIN rows r ON r.batch_id = b.id
     WHERE b.group_id = ANY($1::bigint[]) AND r.intake = 'valid' AND ${COUNTS}
     ORDER BY r.id`,
    [groupIds, since],
  );
  for (const r of rows) {
    let phones = byGroup.get(r.group_id);
    if (!phones) byGroup.set(r.group_id, (phones = new Map<string, number>()));
    if (!phones.has(r.phone)) phones.set(r.phone, r.id);
  }
  return byGroup;
}

/** One message's rows over the groups that have it; undefined when none counts. */
function sentBeforeOf(
  ids: number[],
  numbers: Map<number, Map<string, number>>,
): SentBefore | undefined {
  const maps = ids.map((id) => numbers.get(id)).filter((m) => m !== undefined);
  if (maps.length === 0) return undefined;
  const phones = maps.length === 1 ? maps[0]! : merged(maps);
  return { size: phones.size, rowOf: (phone) => phones.get(phone) };
}

function merged(maps: Array<Map<string, number>>): Map<string, number> {
  const all = new Map<string, number>();
  for (const map of maps)
    for (const [phone, id] of map) if (!(all.get(phone)! < id)) all.set(phone, id);
  return all;
}
