// The repeat window's look-up (src/journal/sentBefore.ts says what counts and why) on the
// PostgreSQL journal, through the rules both journals share (journalRules/sentBefore.ts): only the
// file's own messages and numbers are asked, each through an index. The planner asks it
// synchronously, so what a chunk will ask is read first, a few statements a chunk: `prepare` reads
// the other files' groups of the chunk's messages, `prepareNumbers` the earlier rows of its numbers
// (a page of numbers a statement), as SQLite does.
import {
  earlierRowsOfAsks,
  type EarlierGroup,
  type EarlierRow,
  groupsByHash,
  idsOfMessage,
} from '../journalRules/sentBefore.js';
import type { RepeatWindow } from '../config/settings/durations.js';
import { SmsdropError } from '../errors.js';
import type { GroupKey } from '../ports/plan.js';
import type { SentBefore, SentBeforeLookup } from '../ports/records.js';
import type { Queryable } from './readsQuery.js';
import { PG_DIALECT as d, runRule } from './rules.js';
import type { CheckTurnPasses } from './intakeTurn.js';

/**
 * Key hashes whose groups are kept: more than the planner holds groups (plan/groups.ts), so that a
 * group it drops and loads again within a chunk is still answered; the oldest go first.
 */
const HASHES_KEPT = 50_000;

/**
 * The look-up for intake of `fileId`, or undefined when the window is off. Made even when the
 * window holds nothing yet: a small file read beside this one (intakeTurn.ts: a follower) may be
 * counted before this intake ends.
 */
export function sentBeforeOf(
  db: Queryable,
  fileId: number,
  window: RepeatWindow,
  passes: CheckTurnPasses,
  now = Date.now(),
): Promise<SentBeforeLookup | undefined> {
  if (window.ms <= 0) return Promise.resolve(undefined);
  return Promise.resolve(lookupOf(db, fileId, new Date(now - window.ms).toISOString(), passes));
}

function notPrepared(what: string): SmsdropError {
  return new SmsdropError('E_INTERNAL', `sentBefore asked for ${what} it was not prepared for`);
}

/**
 * A message's answer, kept by the planner with the group (SentBefore). Made for every message,
 * other files holding it or not, and asked again (its groups found anew) once the check turn was
 * handed over since it was found: a follower may have committed rows of it meanwhile.
 */
interface LiveMessage extends SentBefore {
  keyHash: number;
  key: [appId: string, templateId: string, datasJson: string];
  groupIds: number[];
  /** The hand-overs seen when its groups were found. */
  found: number;
}

function liveMessage(
  keyHash: number,
  key: LiveMessage['key'],
  groupIds: number[],
  found: number,
  answers: () => Map<string, EarlierRow[]>,
): LiveMessage {
  const message: LiveMessage = {
    keyHash,
    key,
    groupIds,
    found,
    rowOf(phone) {
      if (message.groupIds.length === 0) return undefined;
      const rows = answers().get(phone);
      if (!rows) throw notPrepared(`number ${phone}`);
      return rows.find((row) => message.groupIds.includes(row.groupId))?.id;
    },
  };
  return message;
}

/**
 * The look-up over the other files' groups. A hash or a number asked for before it was prepared is
 * a bug, not an empty answer (that would send its numbers again). The groups known are forgotten
 * once the check turn was handed over (`passes`).
 */
function lookupOf(
  db: Queryable,
  fileId: number,
  since: string,
  passes: CheckTurnPasses,
): SentBeforeLookup {
  const byHash = new Map<number, EarlierGroup[]>();
  let answers = new Map<string, EarlierRow[]>();
  let passesSeen = passes.count;
  const noticePasses = (): void => {
    if (passes.count === passesSeen) return;
    passesSeen = passes.count;
    byHash.clear();
  };
  const groupsOf = (keyHash: number): EarlierGroup[] => {
    const groups = byHash.get(keyHash);
    if (!groups) throw notPrepared(`key hash ${keyHash}`);
    return groups;
  };
  const lookup = (keyHash: number, appId: string, templateId: string, datasJson: string) =>
    liveMessage(
      keyHash,
      [appId, templateId, datasJson],
      idsOfMessage(groupsOf(keyHash), appId, templateId, datasJson),
      passesSeen,
      () => answers,
    );
  const loadHashes = async (hashes: number[]): Promise<void> => {
    const missing = [...new Set(hashes)].filter((h) => !byHash.has(h));
    if (missing.length === 0) return;
    const groups = await runRule(db, groupsByHash(d, fileId, missing));
    for (const h of missing) byHash.set(h, []);
    for (const g of groups) byHash.get(g.key_hash)!.push(g);
    for (const h of byHash.keys()) {
      if (byHash.size <= HASHES_KEPT) break;
      byHash.delete(h);
    }
  };
  return Object.assign(lookup, {
    async prepare(keys: readonly GroupKey[]): Promise<void> {
      noticePasses();
      await loadHashes(keys.map((k) => k.keyHash));
    },
    async prepareNumbers(asks: ReadonlyArray<readonly [SentBefore, string]>): Promise<void> {
      noticePasses();
      const messages = new Set(asks.map(([m]) => m as LiveMessage));
      const stale = [...messages].filter((m) => m.found !== passesSeen);
      await loadHashes(stale.map((m) => m.keyHash));
      for (const m of stale) {
        m.groupIds = idsOfMessage(groupsOf(m.keyHash), ...m.key);
        m.found = passesSeen;
      }
      const held = asks.filter(([m]) => (m as LiveMessage).groupIds.length > 0);
      answers =
        held.length > 0
          ? await runRule(db, earlierRowsOfAsks(d, held, since))
          : new Map<string, EarlierRow[]>();
    },
  });
}
