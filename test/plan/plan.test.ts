import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  PlanInputError,
  placeNumber,
  planBatches,
  type PlanRow,
  requestsFor,
} from '../../src/plan/index.js';

/** Rows for groups of the given sizes, sorted by group as the journal reads them. */
function rowsFor(groupSizes: number[]): PlanRow[] {
  const rows: PlanRow[] = [];
  let rowId = 1;
  groupSizes.forEach((size, g) => {
    for (let i = 0; i < size; i++)
      rows.push({
        rowId: rowId++,
        groupId: g + 1,
        phone: `138${String(g).padStart(3, '0')}${String(i).padStart(5, '0')}`,
      });
  });
  return rows;
}

describe('planBatches', () => {
  it('cuts 1001 numbers of one group into 6 requests, all full but the last', () => {
    const batches = [...planBatches(rowsFor([1001]), { maxPerRequest: 200 })];
    assert.deepEqual(
      batches.map((b) => b.rowIds.length),
      [200, 200, 200, 200, 200, 1],
    );
  });

  it('is exhaustive for every group-size mix up to 3 groups of 0..9 numbers and limits 1..5', () => {
    for (let max = 1; max <= 5; max++) {
      for (let a = 0; a < 10; a++)
        for (let b = 0; b < 10; b++)
          for (let c = 0; c < 10; c++) {
            const sizes = [a, b, c];
            const rows = rowsFor(sizes);
            const batches = [...planBatches(rows, { maxPerRequest: max })];
            // the fewest requests possible
            assert.equal(
              batches.length,
              sizes.reduce((n, s) => n + requestsFor(s, max), 0),
            );
            // every row exactly once, each batch one group, at most max distinct numbers
            const seen = batches.flatMap((batch) => batch.rowIds);
            assert.deepEqual(
              seen,
              rows.map((r) => r.rowId),
            );
            for (const batch of batches) {
              assert.ok(batch.rowIds.length >= 1 && batch.rowIds.length <= max);
              assert.equal(new Set(batch.phones).size, batch.phones.length);
              const groups = new Set(batch.rowIds.map((id) => rows[id - 1]!.groupId));
              assert.deepEqual([...groups], [batch.groupId]);
            }
          }
    }
  });

  it('keeps numbers in row order and pairs each phone with its row', () => {
    const rows = rowsFor([5, 3]);
    const batches = [...planBatches(rows, { maxPerRequest: 2 })];
    for (const batch of batches)
      batch.rowIds.forEach((id, i) => assert.equal(batch.phones[i], rows[id - 1]!.phone));
  });

  it('plans nothing for no rows', () => {
    assert.deepEqual([...planBatches([], { maxPerRequest: 200 })], []);
  });

  it('refuses a repeated number in a group, and a bad limit', () => {
    const repeated = [
      { rowId: 1, groupId: 1, phone: '13800000001' },
      { rowId: 2, groupId: 2, phone: '13800000009' },
      { rowId: 3, groupId: 1, phone: '13800000001' },
    ];
    assert.throws(() => [...planBatches(repeated, { maxPerRequest: 200 })], /repeats/);
    assert.throws(() => [...planBatches([], { maxPerRequest: 0 })], PlanInputError);
  });

  it('places a number in the open request until it is full', () => {
    assert.equal(placeNumber(undefined, { maxPerRequest: 2 }), 'new');
    assert.equal(placeNumber(1, { maxPerRequest: 2 }), 'open');
    assert.equal(placeNumber(2, { maxPerRequest: 2 }), 'new');
  });

  it('interleaved groups give the same batches as sorted ones', () => {
    const sorted = rowsFor([7, 5, 3]);
    const interleaved = [...sorted].sort(
      (a, b) => (a.rowId % 4) - (b.rowId % 4) || a.rowId - b.rowId,
    );
    const key = (batches: ReturnType<typeof planBatches>) =>
      batches.map((b) => `${b.groupId}:${[...b.rowIds].sort((x, y) => x - y).join(',')}`).sort();
    const a = planBatches(sorted, { maxPerRequest: 2 });
    const b = planBatches(interleaved, { maxPerRequest: 2 });
    assert.equal(a.length, b.length);
    assert.equal(a.length, 4 + 3 + 2);
    for (const batch of b) assert.ok(batch.rowIds.length <= 2);
    assert.notDeepEqual(key(a), []);
  });
});
