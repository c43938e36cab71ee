// The repeat window's look-up (journal/sentBefore.ts says which rows count and why), written once
// for both journals. A file asks only about its own messages and numbers, each through an index:
// the other files' groups of one of its messages by key hash (groups_by_hash), compared value by
// value; then, for a message other files have, the rows of those groups with the file's numbers
// placed in batches (rows_by_group_phone), kept when their batch counts (countedByRepeatWindow).
// Nothing is read per group or row of history. The rows' index is by group first so that a
// file's own entries go at its end: keyed by number, each commit of an intake would write leaves
// all over it, and a file would cost more the more rows the journal holds.
import { KEY_HASH_BITS, type SentBefore } from '../ports/plan.js';
import { sqlList, UNSETTLED_STATES } from '../ports/states.js';
import { countedByRepeatWindow } from './files.js';
import { all, type Dialect, get, type Rule } from './rule.js';

/**
 * True when other files hold rows the window may count (a superset: recent attempts, and the
 * batches not final of files not done). With none, intake needs no look-up at all.
 */
export function* windowHoldsRows(d: Dialect, fileId: number, since: string): Rule<boolean> {
  const found = yield* get<{ found: number }>(
    `SELECT CASE WHEN EXISTS (SELECT 1 FROM attempts a JOIN batches b ON b.id = a.batch_id
         WHERE a.started_at >= ${d.storedTime('?')} AND b.file_id <> ?)
       OR EXISTS (SELECT 1 FROM files f WHERE f.status <> 'done' AND f.id <> ?
         AND EXISTS (SELECT 1 FROM batches b
           WHERE b.file_id = f.id AND b.state IN ${sqlList(UNSETTLED_STATES)}))
     THEN 1 ELSE 0 END AS found`,
    since,
    fileId,
    fileId,
  );
  return Number(found?.found) === 1;
}

/** A group of another file, as groupsByHash reads it. */
export interface EarlierGroup {
  id: number;
  key_hash: number;
  app_id: string;
  template_id: string;
  datas: string;
}

/**
 * SQL: each key_hash of 48 bits (the first 12 hex digits of the key's MD5, as journals kept them
 * before) as the KEY_HASH_BITS kept now, its first bits, as plan/groups.ts makes them: a journal's
 * migration, so that the repeat window finds what it sent before.
 */
export const KEY_HASH_NARROWED = `UPDATE groups SET key_hash = key_hash >> ${48 - KEY_HASH_BITS};`;

/** Other files' groups with one of these key hashes (any message: idsOfMessage compares). */
export function* groupsByHash(
  d: Dialect,
  fileId: number,
  hashes: readonly number[],
): Rule<EarlierGroup[]> {
  const rows = yield* all<EarlierGroup>(
    `SELECT id, key_hash, ${d.appOf('groups')} AS app_id, template_id, datas FROM groups
     WHERE ${d.isInIds('key_hash')} AND file_id <> ? ORDER BY id`,
    d.list(hashes),
    fileId,
  );
  return rows.map((g) => ({ ...g, id: Number(g.id), key_hash: Number(g.key_hash) }));
}

/** The ids of the groups that hold this message (the key hash can collide: values decide). */
export function idsOfMessage(
  groups: readonly EarlierGroup[],
  appId: string,
  templateId: string,
  datasJson: string,
): number[] {
  return groups
    .filter((g) => g.app_id === appId && g.template_id === templateId && g.datas === datasJson)
    .map((g) => g.id);
}

/** An earlier row of a number, in one of the groups asked. */
export interface EarlierRow {
  phone: string;
  groupId: number;
  id: number;
}

/**
 * The counted rows of each number in the groups it is paired with (`pairs`: a number and a group
 * of its message, each pair once), in id order: one index seek a pair (Dialect.isInPairs; on
 * SQLite, a row of another pair's group may come too).
 */
export function* earlierRowsOfPairs(
  d: Dialect,
  pairs: ReadonlyArray<readonly [phone: string, groupId: number]>,
  since: string,
): Rule<EarlierRow[]> {
  const rows = yield* all<{ phone: string; group_id: number; id: number }>(
    `SELECT r.phone, r.group_id, r.id FROM rows r
       JOIN batches b ON b.id = r.batch_id JOIN files f ON f.id = b.file_id
     WHERE ${d.isInPairs('r.group_id', 'r.phone')} AND r.batch_id IS NOT NULL
       AND r.intake = 'valid' AND ${countedByRepeatWindow(d.storedTime('?'))}
     ORDER BY r.id`,
    d.list(pairs.map(([, groupId]) => groupId)),
    d.list(pairs.map(([phone]) => phone)),
    since,
  );
  return rows.map((r) => ({ phone: r.phone, groupId: Number(r.group_id), id: Number(r.id) }));
}

/**
 * A message's earlier rows as the planner asks them (SentBefore): the first earlier row of a
 * number among the message's groups, from `rowsOf` (the rows of one number, in id order).
 */
export function earlierOf(
  groupIds: readonly number[],
  rowsOf: (phone: string, groupIds: readonly number[]) => readonly EarlierRow[],
): SentBefore & { groupIds: readonly number[] } {
  const ids = new Set(groupIds);
  return {
    groupIds,
    rowOf(phone) {
      for (const row of rowsOf(phone, groupIds)) if (ids.has(row.groupId)) return row.id;
      return undefined;
    },
  };
}

/** Pairs of a number and a group per statement when a chunk's numbers are asked at once. */
const PAGE_PAIRS = 5_000;

/**
 * The earlier rows of each number asked (an empty list for none), each in id order, in pages of
 * pairs: one statement for a chunk's numbers, not one a row (on PostgreSQL, not one a message:
 * each is a round trip). Each number is sought in the groups of its own message; rowOf keeps the
 * rows of those. `asks` pairs a number with its message's answer (earlierOf).
 */
export function* earlierRowsOfAsks(
  d: Dialect,
  asks: ReadonlyArray<readonly [SentBefore, string]>,
  since: string,
): Rule<Map<string, EarlierRow[]>> {
  const found = new Map<string, EarlierRow[]>();
  const pairs = new Map<string, readonly [string, number]>();
  for (const [earlier, phone] of asks) {
    found.set(phone, []);
    for (const id of (earlier as ReturnType<typeof earlierOf>).groupIds)
      pairs.set(`${id} ${phone}`, [phone, id]);
  }
  const all = [...pairs.values()];
  for (let at = 0; at < all.length; at += PAGE_PAIRS) {
    const page = all.slice(at, at + PAGE_PAIRS);
    for (const row of yield* earlierRowsOfPairs(d, page, since)) found.get(row.phone)!.push(row);
  }
  // A number's pairs may fall in two pages, each in id order.
  for (const rows of found.values()) if (rows.length > 1) rows.sort((a, b) => a.id - b.id);
  return found;
}
