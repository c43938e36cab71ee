// The repeat window's look-up (src/journal/sentBefore.ts says what counts and why) on the
// PostgreSQL journal, through the rules both journals share (journalRules/sentBefore.ts): only the
// file's own messages and numbers are asked, each through an index. The planner asks it
// synchronously, so what a chunk will ask is read first, a few statements a chunk: `prepare` reads
// the other files' groups of the chunk's messages, `prepareNumbers` the earlier rows of its numbers
// (a page of numbers a statement), as SQLite does.
import {
  earlierOf,
  earlierRowsOfAsks,
  type EarlierGroup,
  type EarlierRow,
  groupsByHash,
  idsOfMessage,
  windowHoldsRows,
} from '../journalRules/sentBefore.js';
import type { RepeatWindow } from '../config/settings/durations.js';
import { SmsdropError } from '../errors.js';
import type { GroupKey } from '../ports/plan.js';
import type { SentBefore, SentBeforeLookup } from '../ports/records.js';
import type { Queryable } from './readsQuery.js';
import { PG_DIALECT as d, runRule } from './rules.js';

/**
 * Key hashes whose groups are kept: more than the planner holds groups (plan/groups.ts), so that a
 * group it drops and loads again within a chunk is still answered; the oldest go first.
 */
const HASHES_KEPT = 50_000;

/** The look-up for intake of `fileId`, or undefined when the window is off or holds nothing. */
export async function sentBeforeOf(
  db: Queryable,
  fileId: number,
  window: RepeatWindow,
  now = Date.now(),
): Promise<SentBeforeLookup | undefined> {
  if (window.ms <= 0) return undefined;
  const since = new Date(now - window.ms).toISOString();
  if (!(await runRule(db, windowHoldsRows(d, fileId, since)))) return undefined;
  return lookupOf(db, fileId, since);
}

function notPrepared(what: string): SmsdropError {
  return new SmsdropError('E_INTERNAL', `sentBefore asked for ${what} it was not prepared for`);
}

/**
 * The look-up over the other files' groups. A hash or a number asked for before it was prepared is
 * a bug, not an empty answer (that would send its numbers again).
 */
function lookupOf(db: Queryable, fileId: number, since: string): SentBeforeLookup {
  const byHash = new Map<number, EarlierGroup[]>();
  let answers = new Map<string, EarlierRow[]>();
  const rowsOf = (phone: string): readonly EarlierRow[] => {
    const rows = answers.get(phone);
    if (!rows) throw notPrepared(`number ${phone}`);
    return rows;
  };
  const lookup = (keyHash: number, appId: string, templateId: string, datasJson: string) => {
    const groups = byHash.get(keyHash);
    if (!groups) throw notPrepared(`key hash ${keyHash}`);
    const ids = idsOfMessage(groups, appId, templateId, datasJson);
    return ids.length === 0 ? undefined : earlierOf(ids, rowsOf);
  };
  return Object.assign(lookup, {
    async prepare(keys: readonly GroupKey[]): Promise<void> {
      const hashes = [...new Set(keys.map((k) => k.keyHash))].filter((h) => !byHash.has(h));
      if (hashes.length === 0) return;
      const groups = await runRule(db, groupsByHash(d, fileId, hashes));
      for (const h of hashes) byHash.set(h, []);
      for (const g of groups) byHash.get(g.key_hash)!.push(g);
      for (const h of byHash.keys()) {
        if (byHash.size <= HASHES_KEPT) break;
        byHash.delete(h);
      }
    },
    async prepareNumbers(asks: ReadonlyArray<readonly [SentBefore, string]>): Promise<void> {
      answers = await runRule(db, earlierRowsOfAsks(d, asks, since));
    },
  });
}
