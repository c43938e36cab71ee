// The settings written as a duration or off: how long ended files are kept (SMSDROP_KEEP, pruned by
// journal/prune.ts) and the repeat window (read by journal/sentBefore.ts).
import { parseDurationOrOff, UNIT_MS, type WrittenDuration } from '../../log/duration.js';

/** How long ended files are kept, as written ("90d"), or off (0 ms). */
export type Keep = WrittenDuration;

/** "90d", "12h", "30m", "2s", or "off" / "0": the keep, or the reason the text is not one. */
export function parseKeep(text: string): Keep | string {
  const keep = parseDurationOrOff(text);
  if (!keep) return 'expected a duration such as 90d, 30d or 12h (s, m, h or d), or off';
  if (keep.text !== 'off' && keep.ms <= 0) return 'expected a duration above 0, or off';
  return keep;
}

/** The repeat window, as written ("24h", "7d"), or off (0 ms). */
export type RepeatWindow = WrittenDuration;

/**
 * Further back, a repeat is a campaign sent again on purpose, and the look-up grows with the
 * window.
 */
const LONGEST_WINDOW_MS = 90 * UNIT_MS.d;

/** "24h", "7d", "90m" (s, m, h or d), or "off" / "0": the window, or the reason it is not one. */
export function parseRepeatWindow(text: string): RepeatWindow | string {
  const window = parseDurationOrOff(text);
  if (!window) return 'expected a duration such as 24h, 7d or 90m (s, m, h or d), or off';
  if (window.text === 'off') return window;
  if (window.ms < UNIT_MS.m) return 'expected at least 1 minute, or off';
  if (window.ms > LONGEST_WINDOW_MS) return 'expected at most 90 days';
  return window;
}
