// One valid row per (group, number) without an index of rows by number: intake asks a Bloom filter
// (seenNumbers.ts) whether a number was placed in a group. It may say "maybe" wrongly, never "no"
// wrongly. What the journals make of its answers (the doubts settled from the journal when the
// file is read) is in test/conformance/doubts.test.ts, on both journals.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { SeenNumbers } from '../../src/plan/seenNumbers.js';

const phoneOf = (k: number) => `13${String((k * 7_919_993) % 1_000_000_000).padStart(9, '0')}`;

describe('SeenNumbers', () => {
  it('never says "not seen" for a number added to the group, and tells other groups apart', () => {
    const seen = SeenNumbers.forFile(12 * 50_000);
    for (let k = 0; k < 50_000; k++) seen.add(1 + (k % 5), phoneOf(k));
    for (let k = 0; k < 50_000; k++)
      assert.ok(seen.mayHave(1 + (k % 5), phoneOf(k)), `number ${k}`);
    let falseAlarms = 0;
    for (let k = 0; k < 50_000; k++) if (seen.mayHave(6 + (k % 5), phoneOf(k))) falseAlarms++;
    // Full to its size (a file of nothing but 12-byte numbers): about 2% by design.
    assert.ok(falseAlarms < 50_000 * 0.04, `${falseAlarms} false alarms in 50,000`);
  });
});

describe('SeenNumbers.addIfNew', () => {
  it('adds and says true exactly when mayHave said false, as mayHave then add did', () => {
    for (const bits of [1 << 16, 64]) {
      const one = new SeenNumbers(bits); // mayHave, then add when it said no
      const other = new SeenNumbers(bits); // addIfNew
      for (let k = 0; k < 2_000; k++) {
        const groupId = k % 5;
        const phone = phoneOf(k % 700);
        const wasNew = !one.mayHave(groupId, phone);
        if (wasNew) one.add(groupId, phone);
        assert.equal(other.addIfNew(groupId, phone), wasNew, `${bits} bits, k ${k}`);
      }
      for (let k = 0; k < 3_000; k++)
        assert.equal(other.mayHave(k % 7, phoneOf(k)), one.mayHave(k % 7, phoneOf(k)));
    }
  });
});
