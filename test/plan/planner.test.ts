// The planner on a store kept in memory: which batch each row joins, when batches are released,
// and how doubts are settled, with no journal underneath (the journal's own tests run it on
// SQLite).
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { errorCode } from '../../src/errors.js';
import type { GroupCounts } from '../../src/intake/groupCounts.js';
import { placeNumber } from '../../src/plan/index.js';
import { cacheKeyOf, GroupCache, type GroupState } from '../../src/plan/groups.js';
import { Planner, type RowToJournal } from '../../src/plan/planner.js';
import { SeenNumbers } from '../../src/plan/seenNumbers.js';
import type {
  GroupKey,
  HeldBatch,
  IntakeCounts,
  PlannedRow,
  PlanStore,
} from '../../src/ports/plan.js';

interface FakeRow {
  id: number;
  line: number;
  phone: string | null;
  groupId: number | null;
  intake: string;
  batchId: number | null;
  duplicateOf: number | null;
}
interface FakeBatch {
  id: number;
  groupId: number;
  phones: string[];
  held: boolean;
}

class FakeStore implements PlanStore {
  header: { columns: string[]; extras: string[] } | undefined;
  readonly rows: FakeRow[] = [];
  readonly groups: GroupKey[] = [];
  readonly batches: FakeBatch[] = [];
  readonly first = new Set<number>();
  readonly releases: number[] = [];
  counts: IntakeCounts | undefined;
  committed = 0;
  #queued: Array<{ row: PlannedRow; onId: ((rowId: number) => void) | undefined }> = [];

  constructor(readonly releaseOnlyCommitted = false) {}

  saveHeader(header: { columns: string[]; extras: string[] }): void {
    this.header = header;
  }
  addRow(row: PlannedRow, onId?: (rowId: number) => void): void {
    this.#queued.push({ row, onId });
  }
  flushRows(): void {
    for (const { row, onId } of this.#queued) {
      const [line, , phone, groupId, intake, , , batchId, duplicateOf] = row;
      const id = this.rows.length + 1;
      this.rows.push({ id, line, phone, groupId, intake, batchId, duplicateOf });
      onId?.(id);
    }
    this.#queued = [];
  }
  dropRows(): void {
    this.#queued = [];
  }
  moveKeptRow(): void {}
  keptNumbers(): Iterable<[number, string]> {
    return [];
  }
  keepInvalidCells(): void {}
  whySuppressed(phone: string): string | undefined {
    return phone === '13900000000' ? 'suppressed' : undefined;
  }
  markDuplicate(rowId: number, duplicateOf: number): void {
    Object.assign(this.rows[rowId - 1]!, { intake: 'duplicate', duplicateOf });
  }
  setRowBatch(rowId: number, batchId: number): void {
    this.rows[rowId - 1]!.batchId = batchId;
  }
  placedRowsMatching(
    keys: Iterable<{ groupId: number; phone: string }>,
  ): Array<[number, number, string]> {
    const wanted = new Set([...keys].map((k) => `${k.groupId}/${k.phone}`));
    return this.rows
      .filter(
        (r) => r.intake === 'valid' && r.batchId !== null && wanted.has(`${r.groupId}/${r.phone}`),
      )
      .map((r) => [r.id, r.groupId!, r.phone!]);
  }
  findGroup(key: GroupKey): number | undefined {
    const at = this.groups.findIndex(
      (g) => g.keyHash === key.keyHash && g.datasJson === key.datasJson,
    );
    return at === -1 ? undefined : at + 1;
  }
  insertGroup(key: GroupKey): number {
    return this.groups.push(key);
  }
  groupValues(groupId: number): { appId: string; templateId: string; datas: string[] } {
    const g = this.groups[groupId - 1]!;
    return { appId: g.appId, templateId: g.templateId, datas: JSON.parse(g.datasJson) as string[] };
  }
  heldBatchOf(groupId: number): HeldBatch | undefined {
    const b = this.batches.filter((x) => x.groupId === groupId && x.held).at(-1);
    return b && { id: b.id, phones: [...b.phones] };
  }
  insertBatch(groupId: number): number {
    return this.batches.push({ id: this.batches.length + 1, groupId, phones: [], held: true });
  }
  saveBatchNumbers(batchId: number, phones: readonly string[]): void {
    this.batches[batchId - 1]!.phones = [...phones];
  }
  releaseBatch(batchId: number): void {
    this.batches[batchId - 1]!.held = false;
    this.releases.push(batchId);
  }
  releaseHeldBatches(): void {
    for (const b of this.batches) b.held = false;
  }
  sendFirst(batchIds: Iterable<number>): void {
    for (const id of batchIds) this.first.add(id);
  }
  finishIntakeCounts(counts: IntakeCounts): void {
    this.counts = { ...counts };
  }
  commits(): number {
    return this.committed;
  }
  writeInBulk(_rows: number, write: () => void): void {
    write();
  }
  commit(): void {
    this.committed++;
  }
  rowsLost(): boolean {
    return false;
  }
  assertNothingLost(): void {}

  /** Each batch as "group: numbers (held|due)". */
  batchesShown(): string[] {
    return this.batches.map(
      (b) =>
        `${b.groupId}: ${[...b.phones.map((p) => p.slice(-2)), b.held ? '(held)' : '(due)'].join(' ')}`,
    );
  }
}

let nextLine = 1;
const row = (phone: string, value: string): RowToJournal => ({
  line: ++nextLine,
  phoneRaw: phone,
  phone,
  appId: 'app',
  templateId: '1',
  datas: [value],
  extras: [],
});
const phone = (n: number): string => `138000000${String(n).padStart(2, '0')}`;

describe('the planner, on a store in memory', () => {
  it('cuts each group into full batches, releases a closed one a chunk later and the rest at finish', async () => {
    const store = new FakeStore();
    let released = 0;
    const planner = new Planner(store, { maxPerRequest: 2, onRelease: () => released++ });
    await planner.write([
      row(phone(1), 'a'),
      row(phone(2), 'b'),
      row(phone(3), 'a'),
      row(phone(4), 'a'),
    ]);
    assert.deepEqual(
      store.batchesShown(),
      ['1: 01 03 (held)', '2: (held)', '1: (held)'],
      'numbers of open batches are written when they close or at the end',
    );
    await planner.write([row(phone(5), 'b'), row('', 'b'), row('13900000000', 'a')]);
    assert.deepEqual(store.batchesShown(), ['1: 01 03 (due)', '2: 02 05 (held)', '1: (held)']);
    assert.equal(released, 1);
    const counts = await planner.finish();
    assert.deepEqual(store.batchesShown(), ['1: 01 03 (due)', '2: 02 05 (due)', '1: 04 (due)']);
    assert.deepEqual(counts, { rows: 7, invalid: 2, duplicates: 0, repeats: 0 });
    assert.deepEqual(store.counts, counts);
    assert.deepEqual(
      store.rows.map((r) => r.batchId),
      [1, 2, 1, 3, 2, null, null],
      'rows in file order, each with its batch',
    );
  });

  it('settles doubts at the end: repeats become duplicates, a new number joins its held batch, sent first', async () => {
    const store = new FakeStore();
    // One bit: every number but a group's first is a doubt.
    const planner = new Planner(store, { maxPerRequest: 3, seenNumbers: new SeenNumbers(1) });
    await planner.write([row(phone(1), 'a'), row(phone(2), 'a'), row(phone(1), 'a')]);
    await planner.write([row(phone(2), 'a'), row(phone(3), 'a')]);
    assert.deepEqual(
      store.batchesShown(),
      ['1: (held)'],
      'only the first number placed; the others wait',
    );
    const counts = await planner.finish();
    assert.deepEqual(store.batchesShown(), ['1: 01 02 03 (due)']);
    assert.deepEqual(
      store.rows.map((r) => [r.intake, r.batchId, r.duplicateOf]),
      [
        ['valid', 1, null],
        ['valid', 1, null],
        ['duplicate', null, 1],
        ['duplicate', null, 2],
        ['valid', 1, null],
      ],
    );
    assert.deepEqual(counts, { rows: 5, invalid: 0, duplicates: 2, repeats: 0 });
    assert.deepEqual([...store.first], [1]);
  });

  it("keeps a group's last batch held when its last row is read while it has doubts", async () => {
    const store = new FakeStore();
    let reads = 0;
    // The counts say that the third and fourth rows read are their groups' last.
    const groupCounts = {
      ready: true,
      allRead: () => false,
      rowRead: () => ++reads === 3 || reads === 4,
    } as unknown as GroupCounts;
    const planner = new Planner(store, {
      maxPerRequest: 5,
      seenNumbers: new SeenNumbers(1),
      groupCounts,
    });
    await planner.write([
      row(phone(1), 'a'),
      row(phone(2), 'a'),
      row(phone(5), 'b'),
      row(phone(3), 'a'),
    ]);
    await planner.write([row(phone(4), 'c')]);
    assert.deepEqual(
      store.batchesShown(),
      ['1: 01 (held)', '2: 05 (due)', '3: (held)'],
      'b ended: released a chunk later; a has doubts: held',
    );
    await planner.finish();
    assert.deepEqual(
      store.batchesShown(),
      ['1: 01 02 03 (due)', '2: 05 (due)', '3: 04 (due)'],
      "the new numbers among the doubts joined a's batch",
    );
  });

  it('with deferred commits, releases a closed batch only after a commit holds it', async () => {
    const store = new FakeStore(true);
    const planner = new Planner(store, { maxPerRequest: 1 });
    await planner.write([row(phone(1), 'a')]);
    await planner.write([row(phone(2), 'a')]);
    assert.deepEqual(store.releases, [], 'closed, but no commit since');
    store.commit();
    await planner.write([]);
    assert.deepEqual(store.releases, [1, 2]);
  });

  it('records a number another file sent the message to as a repeat of that row, not placed', async () => {
    const store = new FakeStore();
    const sentBefore = () => ({ size: 1, rowOf: (p: string) => (p === phone(1) ? 99 : undefined) });
    const planner = new Planner(store, { maxPerRequest: 5, sentBefore });
    await planner.write([row(phone(1), 'a'), row(phone(2), 'a'), row(phone(1), 'a')]);
    const counts = await planner.finish();
    assert.deepEqual(
      store.rows.map((r) => [r.intake, r.duplicateOf]),
      [
        ['duplicate', 99],
        ['valid', null],
        ['duplicate', 99],
      ],
    );
    assert.deepEqual(counts, { rows: 3, invalid: 0, duplicates: 2, repeats: 2 });
    assert.deepEqual(store.batchesShown(), ['1: 02 (due)']);
  });
});

/** Rows for groups of these sizes, the groups' rows interleaved (one of each in turn). */
function interleavedRows(groupSizes: number[]): RowToJournal[] {
  const rows: RowToJournal[] = [];
  for (let i = 0; i < Math.max(0, ...groupSizes); i++)
    groupSizes.forEach((size, g) => {
      if (i < size) rows.push(row(`138${g}${String(i).padStart(7, '0')}`, `g${g}`));
    });
  return rows;
}

describe('the rule (placeNumber), through the planner', () => {
  it('is exhaustive for every group-size mix up to 3 groups of 0..7 numbers and limits 1..4', async () => {
    for (let max = 1; max <= 4; max++)
      for (let a = 0; a < 8; a++)
        for (let b = 0; b < 8; b++)
          for (let c = 0; c < 8; c++) {
            const sizes = [a, b, c];
            const rows = interleavedRows(sizes);
            const store = new FakeStore();
            const planner = new Planner(store, { maxPerRequest: max, fileBytes: 10_000 });
            for (let at = 0; at < rows.length; at += 5) await planner.write(rows.slice(at, at + 5));
            await planner.finish();
            const what = `sizes ${sizes.join(',')}, max ${max}`;
            // the fewest requests possible, all full but each group's last
            const fewest = sizes.reduce((n, s) => n + Math.ceil(s / max), 0);
            assert.equal(store.batches.length, fewest, what);
            for (const batch of store.batches) {
              assert.ok(batch.phones.length >= 1 && batch.phones.length <= max, what);
              assert.equal(new Set(batch.phones).size, batch.phones.length, what);
              assert.ok(!batch.held, what);
            }
            // every row exactly once, in its group's batch, numbers in row order
            const inBatches = store.batches.flatMap((batch) => batch.phones);
            assert.deepEqual([...inBatches].sort(), rows.map((r) => r.phone).sort(), what);
            store.rows.forEach((stored, i) => {
              const batch = store.batches[stored.batchId! - 1]!;
              assert.equal(
                store.groups[batch.groupId - 1]!.datasJson,
                JSON.stringify(rows[i]!.datas),
              );
              assert.ok(batch.phones.includes(rows[i]!.phone!), what);
            });
            for (const g of [0, 1, 2]) {
              const ofGroup = store.batches.filter((x) => x.phones[0]?.startsWith(`138${g}`));
              assert.deepEqual(
                ofGroup.flatMap((x) => x.phones),
                rows.filter((r) => r.phone!.startsWith(`138${g}`)).map((r) => r.phone),
                `${what}: group ${g} in row order`,
              );
              assert.ok(
                ofGroup.slice(0, -1).every((x) => x.phones.length === max),
                what,
              );
            }
          }
  });

  it('places a number in the open request until it is full', () => {
    assert.equal(placeNumber(undefined, { maxPerRequest: 2 }), 'new');
    assert.equal(placeNumber(1, { maxPerRequest: 2 }), 'open');
    assert.equal(placeNumber(2, { maxPerRequest: 2 }), 'new');
  });

  it('refuses limits it cannot plan with (E_PLAN_INPUT), before writing anything', () => {
    for (const maxPerRequest of [0, -1, 2.5, Number.NaN]) {
      const store = new FakeStore();
      assert.throws(
        () => new Planner(store, { maxPerRequest }),
        (err) => errorCode(err) === 'E_PLAN_INPUT',
        String(maxPerRequest),
      );
      assert.deepEqual(store.rows, []);
    }
  });
});

describe('the group cache', () => {
  it('evicts the group added first, whatever was read since', () => {
    const cache = new GroupCache(2);
    const group = (key: string): GroupState => ({
      key,
      appId: key,
      templateId: '1',
      datas: [],
      slot: 0,
      groupId: 0,
      batchId: undefined,
      phones: [],
      dirty: false,
      fresh: false,
      earlier: undefined,
    });
    assert.equal(cache.add(group('a')), undefined);
    cache.add(group('b'));
    assert.ok(cache.get('a'));
    assert.equal(cache.add(group('c'))?.key, 'a');
    assert.deepEqual(
      cache.list().map((g) => g.key),
      ['b', 'c'],
    );
  });

  it('finds a group by its values, from the recent ones too, and never one it let go', () => {
    const cache = new GroupCache(3);
    const group = (appId: string): GroupState => ({
      key: cacheKeyOf(appId, '1', ['v', appId]),
      appId,
      templateId: '1',
      datas: ['v', appId],
      slot: 0,
      groupId: 0,
      batchId: undefined,
      phones: [],
      dirty: false,
      fresh: false,
      earlier: undefined,
    });
    const [a, b, c, d] = [group('a'), group('b'), group('c'), group('d')];
    for (const g of [a, b, c]) cache.add(g);
    for (let i = 0; i < 2; i++) {
      // found by key the first time, from the recent ones the second (fresh arrays, equal values)
      assert.equal(cache.find('a', '1', ['v', 'a']), a);
      assert.equal(cache.find('b', '1', ['v', 'b']), b);
    }
    assert.equal(cache.find('a', '1', ['v']), undefined);
    assert.equal(cache.find('a', '2', ['v', 'a']), undefined);
    assert.equal(cache.add(d), a); // evicted: first in
    assert.equal(cache.find('a', '1', ['v', 'a']), undefined);
    cache.delete(b);
    assert.equal(cache.find('b', '1', ['v', 'b']), undefined);
    assert.equal(cache.find('d', '1', ['v', 'd']), d);
    assert.equal(cache.find('c', '1', ['v', 'c']), c);
  });
});
