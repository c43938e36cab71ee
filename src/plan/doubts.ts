// Rows whose number their group may have already ("doubts"). Which numbers a group has is asked
// of a Bloom filter (seenNumbers.ts): a row it cannot vouch for is journalled without a batch and
// settled exactly from the journal once the file is read; its group keeps its last batch held
// until then, so that a new number among the doubts joins it and no extra request is made.
import type { SeenNumbers } from './seenNumbers.js';
import type { PlanStore } from './store.js';

/**
 * A valid row whose number the group may have already. Its group by id only: most doubts are
 * repeats, and keeping each one's values (the row's own strings) until the file is read cost ~130
 * bytes a doubt, 2.6 MB for a 4M-row list.
 */
interface Doubt {
  /** Known once the row is written (see PlanStore.addRow): before the chunk ends. */
  rowId: number;
  groupId: number;
  phone: string;
}

/** What settling the doubts did: the batches new numbers joined, and the repeats found. */
export interface Settled {
  joined: Set<number>;
  duplicates: number;
}

export class Doubts {
  readonly #doubts: Doubt[] = [];
  /** Groups (ids) with doubts: their last batch stays held until the doubts are settled. */
  readonly #groups = new Set<number>();

  constructor(readonly seen: SeenNumbers) {}

  /** The number is in a batch of the group now. */
  placed(groupId: number, phone: string): void {
    this.seen.add(groupId, phone);
  }

  /**
   * True: the group certainly had no row placed with this number, and now it has (as `placed`).
   * False: it may have one (a doubt), and nothing changed. One hash where mayHave then placed
   * made two.
   */
  placedIfNew(groupId: number, phone: string): boolean {
    return this.seen.addIfNew(groupId, phone);
  }

  /**
   * A doubt about to be written: the returned callback takes its row id, and only then it counts.
   */
  add(groupId: number, phone: string): (rowId: number) => void {
    this.#groups.add(groupId);
    return (rowId) => void this.#doubts.push({ rowId, groupId, phone });
  }

  /** The doubts so far (what settling will ask the store about). */
  list(): readonly Doubt[] {
    return this.#doubts;
  }

  /** Whether the group has doubts: its last batch must stay held. */
  inGroup(groupId: number): boolean {
    return this.#groups.has(groupId);
  }

  /**
   * The file is read: each doubt is a repeat of the row that has its number in its group (one in a
   * batch, or the first doubt with it), or else the first of its number, which `place` puts in its
   * group's batch. The filter only ever says "maybe" more often as it fills, so every row after a
   * doubt with the same number is a doubt too, and the row placed for a number, if any, comes
   * before all of them.
   */
  settle(store: PlanStore, place: (groupId: number, phone: string) => number): Settled {
    const settled: Settled = { joined: new Set<number>(), duplicates: 0 };
    if (this.#doubts.length === 0) return settled;
    const firstRowOf = new Map<string, number>();
    for (const [rowId, groupId, phone] of store.placedRowsMatching(this.#doubts))
      firstRowOf.set(`${groupId}\u0000${phone}`, rowId);
    for (const doubt of this.#doubts) {
      const key = `${doubt.groupId}\u0000${doubt.phone}`;
      const first = firstRowOf.get(key);
      if (first !== undefined) {
        store.markDuplicate(doubt.rowId, first);
        settled.duplicates++;
        continue;
      }
      firstRowOf.set(key, doubt.rowId);
      const batchId = place(doubt.groupId, doubt.phone);
      store.setRowBatch(doubt.rowId, batchId);
      settled.joined.add(batchId);
    }
    this.#doubts.length = 0;
    this.#groups.clear();
    return settled;
  }
}
