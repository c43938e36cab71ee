// What a store on a server (PostgreSQL) loads before the planner's synchronous calls ask it: a
// chunk's groups and numbers, or the doubts' groups and rows before they are settled. On a store
// that answers at once (SQLite: no prepareChunk) nothing is computed for a chunk: the planner's
// hot loop pays nothing for it. SQLite looks the doubts up there too: a large file's a page of
// rows at a time, with turns of the event loop between (journal/placedRows.ts).
import { andThen, both } from './awaitable.js';
import { cacheKeyOf, type GroupCache, groupKey } from './groups.js';
import type { RowToJournal } from './writer.js';
import type { Awaitable } from '../ports/awaitable.js';
import type {
  ChunkNeeds,
  GroupKey,
  PlacedKey,
  PlanStore,
  SentBefore,
  SentBeforeLookup,
} from './store.js';

/** Loads what the chunk's rows will ask of the store and of the repeat window's look-up. */
export function prepareChunk(
  store: PlanStore,
  sentBefore: SentBeforeLookup | undefined,
  held: GroupCache,
  rows: readonly RowToJournal[],
): Awaitable<void> {
  const lookup = sentBefore?.prepare || sentBefore?.prepareNumbers ? sentBefore : undefined;
  if (!store.prepareChunk && !lookup) return undefined;
  const { needs, keys } = needsOf(held, rows);
  const loaded = both(store.prepareChunk?.(needs), lookup?.prepare?.(needs.groups));
  if (!lookup?.prepareNumbers) return loaded;
  return andThen(loaded, () => lookup.prepareNumbers!(numbersAsked(lookup, held, keys, rows)));
}

/** The groups of the chunk's rows the planner does not hold (by cache key), and their numbers. */
function needsOf(
  held: GroupCache,
  rows: readonly RowToJournal[],
): { needs: ChunkNeeds; keys: Map<string, GroupKey> } {
  const groups = new Map<string, GroupKey>();
  const phones: string[] = [];
  for (const row of rows) {
    if (row.keptRowId !== undefined) continue;
    if (row.phone) phones.push(row.phone);
    if (row.appId === undefined || row.templateId === undefined) continue;
    if (held.find(row.appId, row.templateId, row.datas)) continue;
    const key = cacheKeyOf(row.appId, row.templateId, row.datas);
    if (!groups.has(key)) groups.set(key, groupKey(row.appId, row.templateId, row.datas));
  }
  return { needs: { rows: rows.length, groups: [...groups.values()], phones }, keys: groups };
}

/**
 * Each number of the chunk whose message other files have, with that message's earlier rows (a
 * held group's, or the look-up's answer for a group the planner will load).
 */
function numbersAsked(
  lookup: SentBeforeLookup,
  held: GroupCache,
  keys: Map<string, GroupKey>,
  rows: readonly RowToJournal[],
): Array<[SentBefore, string]> {
  const asks: Array<[SentBefore, string]> = [];
  const loaded = new Map<string, SentBefore | undefined>();
  for (const row of rows) {
    if (row.keptRowId !== undefined || !row.phone) continue;
    if (row.appId === undefined || row.templateId === undefined) continue;
    const state = held.find(row.appId, row.templateId, row.datas);
    let earlier = state?.earlier;
    if (!state) {
      const cacheKey = cacheKeyOf(row.appId, row.templateId, row.datas);
      if (!loaded.has(cacheKey)) {
        const k = keys.get(cacheKey)!;
        loaded.set(cacheKey, lookup(k.keyHash, k.appId, k.templateId, k.datasJson));
      }
      earlier = loaded.get(cacheKey);
    }
    if (earlier) asks.push([earlier, row.phone]);
  }
  return asks;
}

/** Loads what settling these doubts will ask: their rows and groups, then the window's answers. */
export function prepareSettle(
  store: PlanStore,
  sentBefore: SentBeforeLookup | undefined,
  doubts: readonly PlacedKey[],
): Awaitable<void> {
  if (!store.prepareSettle || doubts.length === 0) return undefined;
  return andThen(store.prepareSettle(doubts), () => {
    if (!sentBefore?.prepare) return;
    const keys = new Map<number, GroupKey>();
    for (const { groupId } of doubts) {
      if (keys.has(groupId)) continue;
      const { appId, templateId, datas } = store.groupValues(groupId);
      keys.set(groupId, groupKey(appId, templateId, datas));
    }
    return sentBefore.prepare([...keys.values()]);
  });
}
