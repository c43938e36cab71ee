import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { msToNextDayChange } from './dayChange.js';

describe('msToNextDayChange', () => {
  it('counts to Shanghai midnight (16:00 UTC) when that comes before the host midnight', () => {
    // Only meaningful where the host's midnight is not between 15:59:50 and 16:00 UTC.
    const at = new Date(Date.UTC(2026, 10, 24, 15, 59, 50));
    const local = new Date(at.getFullYear(), at.getMonth(), at.getDate() + 1).getTime() - at.getTime();
    assert.equal(msToNextDayChange(at), Math.min(10_000, local));
  });
  it('is never more than a day', () => {
    const left = msToNextDayChange();
    assert.ok(left > 0 && left <= 86_400_000, String(left));
  });
});
