// The groups the planner holds in memory while a file is read: each with its open batch (the one
// still taking numbers) and what the repeat guard found for its message. The journal holds every
// group; these are the most recently opened, first in, first out.
import { hash } from 'node:crypto';
import { groupKeyOf } from '../intake/row.js';
import { KEY_HASH_BITS } from '../ports/plan.js';
import type { GroupKey, SentBefore } from './store.js';

/** A group as intake sees it: its id and its open batch. */
export interface GroupState {
  /** Its key in the cache (cacheKeyOf). */
  key: string;
  /** Its message, to tell a row of it without making the row's key (GroupCache.find). */
  appId: string;
  templateId: string;
  datas: readonly string[];
  /** Its slot in the group counts. */
  slot: number;
  groupId: number;
  batchId: number | undefined;
  phones: string[];
  /** Phones changed since the batch's numbers were last written. */
  dirty: boolean;
  /** Made by this intake, no number placed in it yet: its next number cannot be a repeat. */
  fresh: boolean;
  /** Other files' rows of this message (the repeat window's): their numbers are not sent again. */
  earlier: SentBefore | undefined;
}

/** Groups kept in memory (the most recently opened); the journal holds them all. */
export const GROUP_CACHE_SIZE = 20_000;

/** Groups found last, compared value by value before a row's key is made. */
const RECENT_GROUPS = 8;

function isGroupOf(
  state: GroupState,
  appId: string,
  templateId: string,
  datas: readonly string[],
): boolean {
  if (state.appId !== appId || state.templateId !== templateId) return false;
  if (state.datas.length !== datas.length) return false;
  for (let i = 0; i < datas.length; i++) if (state.datas[i] !== datas[i]) return false;
  return true;
}

export class GroupCache {
  readonly #groups = new Map<string, GroupState>();
  /**
   * The last groups found, most rows belong to: a row of one of them is told by comparing its
   * values (no key to make and hash, ~half the planner's own CPU per row). Always in #groups.
   */
  readonly #recent: GroupState[] = [];
  #nextRecent = 0;

  constructor(readonly capacity = GROUP_CACHE_SIZE) {}

  /** The group of this message, if held: from the recent ones, else by its key (cacheKeyOf). */
  find(appId: string, templateId: string, datas: readonly string[]): GroupState | undefined {
    for (const state of this.#recent) if (isGroupOf(state, appId, templateId, datas)) return state;
    const state = this.#groups.get(cacheKeyOf(appId, templateId, datas));
    if (state) this.#remember(state);
    return state;
  }

  #remember(state: GroupState): void {
    if (this.#recent.length < RECENT_GROUPS) this.#recent.push(state);
    else this.#recent[this.#nextRecent++ % RECENT_GROUPS] = state;
  }

  #forget(state: GroupState): void {
    const at = this.#recent.indexOf(state);
    if (at >= 0) this.#recent.splice(at, 1);
  }

  // First in, first out: moving an entry on every hit costs more than the rare reload of a busy
  // group that was evicted (one indexed read).
  get(key: string): GroupState | undefined {
    return this.#groups.get(key);
  }

  /** Adds a group; returns the oldest one when it had to make room for it. */
  add(state: GroupState): GroupState | undefined {
    let evicted: GroupState | undefined;
    if (this.#groups.size >= this.capacity) {
      const oldest = this.#groups.values().next();
      if (!oldest.done) {
        evicted = oldest.value;
        this.delete(evicted);
      }
    }
    this.#groups.set(state.key, state);
    return evicted;
  }

  delete(state: GroupState): void {
    this.#groups.delete(state.key);
    this.#forget(state);
  }

  /** The groups held now, as a list (the caller may delete while going through it). */
  list(): GroupState[] {
    return [...this.#groups.values()];
  }

  forEach(each: (state: GroupState) => void): void {
    this.#groups.forEach((state) => each(state));
  }
}

/**
 * A group's key in the cache, made for every row: its parts joined by NUL, about twice as quick to
 * make as groupKeyOf's JSON. No id or value holds a NUL in practice, and then the parts can be told
 * apart again from the key, so two groups never share one. A part with a NUL gets the JSON form
 * after a NUL, which no other key starts with (an id is never empty).
 */
export function cacheKeyOf(appId: string, templateId: string, datas: readonly string[]): string {
  let key = appId + '\u0000' + templateId;
  let nul = appId.includes('\u0000') || templateId.includes('\u0000');
  for (let i = 0; i < datas.length && !nul; i++) {
    const value = datas[i]!;
    nul = value.includes('\u0000');
    key += '\u0000' + value;
  }
  return nul ? '\u0000' + JSON.stringify([appId, templateId, datas]) : key;
}

/** A group's identity for the journal, made once per group loaded (not per row). */
export function groupKey(appId: string, templateId: string, datas: readonly string[]): GroupKey {
  // Of the journal's own key form (groupKeyOf), so journals written before keep finding their
  // groups (journalRules/sentBefore.ts's KEY_HASH_NARROWED took their hashes to this width).
  const digits = hash('md5', groupKeyOf(appId, templateId, datas)).slice(0, KEY_HASH_BITS / 4);
  const keyHash = parseInt(digits, 16);
  return { appId, templateId, datasJson: JSON.stringify(datas), keyHash };
}
