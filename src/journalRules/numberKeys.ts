// A normalised number (intake/phone.ts) as one exact double, for the repeat window's look-ups on
// either journal: 11 digits (mainland), or 00 and at most 15 digits. As doubles the first stay
// below 2e10 and the second (without their 00) are put above 2^52, so the two kinds never meet.
// Both journals make the keys in SQL (numberKeySql) and sort them, so no string is kept per row.
import type { SentBefore } from '../ports/records.js';

/** 2^52: international numbers' keys start here. */
const INTERNATIONAL_BASE = 4_503_599_627_370_496;
const MAINLAND = /^1\d{10}$/;
const INTERNATIONAL = /^00[1-9]\d{5,14}$/;

/** The key of a number, or undefined for one that is neither kind (never counted). */
export function numberKey(phone: string): number | undefined {
  if (MAINLAND.test(phone)) return Number(phone);
  if (INTERNATIONAL.test(phone)) return INTERNATIONAL_BASE + Number(phone.slice(2));
  return undefined;
}

/** SQL: the key of the number in `column`, as numberKey makes it. */
export function numberKeySql(column: string): string {
  return `CASE WHEN substr(${column}, 1, 2) = '00'
    THEN ${INTERNATIONAL_BASE} + CAST(substr(${column}, 3) AS BIGINT) ELSE CAST(${column} AS BIGINT) END`;
}

/** The first index whose value is >= `value` in a sorted array (its length when none is). */
export function firstAtLeast(sorted: Float64Array, value: number): number {
  let lo = 0;
  let hi = sorted.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (sorted[mid]! < value) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/** Earlier rows by number, from their keys sorted and each key's row at the same index. */
export function sortedSentBefore(keys: Float64Array, rowIds: Float64Array): SentBefore {
  return {
    size: keys.length,
    rowOf(phone) {
      const key = numberKey(phone);
      if (key === undefined) return undefined;
      const i = firstAtLeast(keys, key);
      return keys[i] === key ? rowIds[i] : undefined;
    },
  };
}
