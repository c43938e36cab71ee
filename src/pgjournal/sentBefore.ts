// The repeat window's look-up (src/journal/sentBefore.ts says what counts and why) on the
// PostgreSQL journal. The planner asks it synchronously, once per group: the window's groups of
// other files are read when the look-up is made, and the counted numbers of the groups a chunk
// will ask for by `prepare`, a page of rows at a time, kept as sorted typed arrays per group (a
// million numbers: ~16 MB).
import { numberKeySql, sortedSentBefore } from '../journalRules/numberKeys.js';
import { countedByRepeatWindow } from '../journalRules/files.js';
import type { RepeatWindow } from '../config/settings/durations.js';
import { SmsdropError } from '../errors.js';
import type { GroupKey } from '../ports/plan.js';
import type { SentBefore, SentBeforeLookup } from '../ports/records.js';
import { sqlList, UNSETTLED_STATES } from '../ports/states.js';
import { all, type Queryable } from './readsQuery.js';

/** Rows of numbers per statement while the look-up is read. */
const PAGE_ROWS = 20_000;

/** Batches whose rows count, for `b` joined to its file `f` (sentBefore.ts's COUNTS). */
const COUNTS = countedByRepeatWindow('$2');

interface WindowGroup {
  id: number;
  key_hash: number;
  app_id: string;
  template_id: string;
  datas: string;
}

/** The window's groups of other files (`$1` the file, `$2` the window's start). */
const WINDOW_GROUPS = `
  SELECT g.id, g.key_hash, g.app_id, g.template_id, g.datas FROM groups g
  WHERE g.file_id != $1 AND g.id IN (
    SELECT b.group_id FROM attempts a JOIN batches b ON b.id = a.batch_id WHERE a.started_at >= $2
    UNION
    SELECT b.group_id FROM files f JOIN batches b ON b.file_id = f.id
    WHERE f.status != 'done' AND b.state IN ${sqlList(UNSETTLED_STATES)}
  )`;

/** The look-up for intake of `fileId`, or undefined when the window is off or holds no group. */
export async function sentBeforeOf(
  db: Queryable,
  fileId: number,
  window: RepeatWindow,
  now = Date.now(),
): Promise<SentBeforeLookup | undefined> {
  if (window.ms <= 0) return undefined;
  const since = new Date(now - window.ms).toISOString();
  const any = await all(db, `${WINDOW_GROUPS} LIMIT 1`, [fileId, since]);
  return any.length === 0 ? undefined : lookupOf(db, fileId, since);
}

/**
 * The look-up over the window's groups. The groups of a key hash, and their numbers, are read by
 * `prepare` (the planner calls it before it asks, chunk by chunk) and kept while the look-up
 * lives, as SQLite keeps the large ones. A hash asked for before it was prepared is a bug, not an
 * empty answer (that would send its numbers again).
 */
function lookupOf(db: Queryable, fileId: number, since: string): SentBeforeLookup {
  const byHash = new Map<number, Array<WindowGroup & Numbers>>();
  const lookup = (keyHash: number, appId: string, templateId: string, datasJson: string) => {
    const groups = byHash.get(keyHash);
    if (!groups)
      throw new SmsdropError('E_INTERNAL', 'sentBefore asked for a group it was not prepared for');
    const found = groups.filter(
      (g) => g.app_id === appId && g.template_id === templateId && g.datas === datasJson,
    );
    return found.length === 0 ? undefined : sentBeforeFrom(found);
  };
  return Object.assign(lookup, {
    async prepare(keys: readonly GroupKey[]): Promise<void> {
      const hashes = [...new Set(keys.map((k) => k.keyHash))].filter((h) => !byHash.has(h));
      if (hashes.length === 0) return;
      const groups = await all<WindowGroup>(
        db,
        `${WINDOW_GROUPS} AND g.key_hash = ANY($3::bigint[]) ORDER BY g.id`,
        [fileId, since, hashes],
      );
      const numbers =
        groups.length > 0 ? await numbersOfGroups(db, groups, since) : new Map<number, Numbers>();
      for (const h of hashes) byHash.set(h, []);
      for (const g of groups)
        byHash.get(g.key_hash)!.push({ ...g, ...(numbers.get(g.id) ?? EMPTY) });
    },
  });
}

interface Numbers {
  keys: Float64Array;
  rowIds: Float64Array;
}
const EMPTY: Numbers = { keys: new Float64Array(0), rowIds: new Float64Array(0) };

/** The counted rows of the groups, by group: keys sorted (ties by row id). */
async function numbersOfGroups(
  db: Queryable,
  groups: WindowGroup[],
  since: string,
): Promise<Map<number, Numbers>> {
  const pairs = new Map<number, Array<[number, number]>>();
  for (let after = 0; ;) {
    const rows = await all<{ group_id: number; key: number; id: number }>(
      db,
      `SELECT b.group_id, ${numberKeySql('r.phone')} AS key, r.id
       FROM batches b JOIN files f ON f.id = b.file_id JOIN rows r ON r.batch_id = b.id
       WHERE b.group_id = ANY($1::bigint[]) AND r.intake = 'valid' AND ${COUNTS} AND r.id > $3
       ORDER BY r.id LIMIT $4`,
      [groups.map((g) => g.id), since, after, PAGE_ROWS],
    );
    for (const r of rows) {
      const list = pairs.get(r.group_id) ?? [];
      list.push([r.key, r.id]);
      pairs.set(r.group_id, list);
    }
    if (rows.length < PAGE_ROWS) break;
    after = rows[rows.length - 1]!.id;
  }
  const out = new Map<number, Numbers>();
  for (const [groupId, list] of pairs) out.set(groupId, sorted(list));
  return out;
}

function sorted(list: Array<[number, number]>): Numbers {
  list.sort((a, b) => a[0] - b[0] || a[1] - b[1]);
  return {
    keys: Float64Array.from(list, (p) => p[0]),
    rowIds: Float64Array.from(list, (p) => p[1]),
  };
}

function sentBeforeFrom(parts: Numbers[]): SentBefore {
  const merged =
    parts.length === 1
      ? parts[0]!
      : sorted(
          parts.flatMap((p) => Array.from(p.keys, (k, i): [number, number] => [k, p.rowIds[i]!])),
        );
  return sortedSentBefore(merged.keys, merged.rowIds);
}
