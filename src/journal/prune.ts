// Pruning (SMSDROP_KEEP): a file that ended (done or refused) longer ago than the setting loses
// its rows, groups, batches and attempts, with every number and value in them; its files row
// stays, with its counts stored on it (migration 11), so `smsdrop report` lists it and the same
// bytes dropped again are still recognised and not sent. The suppression list stays.
//
// It never takes what a later run still reads: only ended files, none being processed now, none
// holding a batch that may still go (one in flight, or planned after an attempt or a split: the
// repeat window counts those whenever they started, sentBefore.ts), and the setting is refused
// when shorter than the repeat window or late-file resumption (config).
//
// The work goes in small steps, each one write of the journal's write queue (writeQueue.ts): no
// transaction is held across an await, an intake's open bulk transaction simply takes each step
// in, and requests wait at most one step. Then free pages are cut off the file (storage.ts), a few
// thousand at a time, and the WAL is emptied with a TRUNCATE checkpoint once no transaction is open.
import { type DurationUnit, durationMs } from '../log/duration.js';

/** How long ended files are kept, as written ("90d"), or off (0 ms). */
export interface Keep {
  ms: number;
  text: string;
}

const DURATION_TEXT = /^(\d+(?:\.\d+)?)\s*(s|m|h|d)$/;

/** "90d", "12h", "30m", "2s", or "off" / "0": the keep, or the reason the text is not one. */
export function parseKeep(text: string): Keep | string {
  const t = text.trim().toLowerCase();
  if (t === 'off' || t === '0') return { ms: 0, text: 'off' };
  const m = DURATION_TEXT.exec(t);
  if (!m) return 'expected a duration such as 90d, 30d or 12h (s, m, h or d), or off';
  const ms = durationMs(m[1]!, m[2] as DurationUnit);
  if (ms <= 0) return 'expected a duration above 0, or off';
  return { ms, text: `${m[1]}${m[2]}` };
}
