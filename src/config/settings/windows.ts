// Two pacing settings written as text, parsed where the configuration is validated: the message
// window of the rate limiter (send/rate.ts) and the hours of the sending window (send/window.ts).
import { type DurationUnit, durationMs, UNIT_MS } from '../../log/duration.js';

/** N numbers per span of `ms` milliseconds, as written (e.g. "10000/1h"). */
export interface MessageWindow {
  messages: number;
  ms: number;
  text: string;
}

const MESSAGE_WINDOW_TEXT = /^(\d+)\s*\/\s*(\d+(?:\.\d+)?)?\s*(s|m|h|d)$/;
/** A window longer than a week is a quota, not a rate: not what this limit is for. */
const LONGEST_WINDOW_MS = 7 * UNIT_MS.d;

/** "N/DURATION" (s, m, h or d; "500/10m", "10000/h") -> the window, or the reason it is not one. */
export function parseMessageWindow(text: string): MessageWindow | string {
  const m = MESSAGE_WINDOW_TEXT.exec(text.trim().toLowerCase());
  if (!m)
    return 'expected N/DURATION, numbers per span of time, such as 10000/1h or 500/10m (s, m, h or d)';
  const messages = Number(m[1]);
  const ms = durationMs(m[2] ?? '1', m[3] as DurationUnit);
  if (!Number.isSafeInteger(messages) || messages < 1)
    return 'expected at least 1 number per window';
  if (ms < UNIT_MS.s) return 'expected a window of at least 1 s';
  if (ms > LONGEST_WINDOW_MS) return 'expected a window of at most 7 days';
  return { messages, ms, text: `${messages}/${m[2] ?? ''}${m[3]}` };
}

export const MINUTES_PER_DAY = 24 * 60;
const HOURS_TEXT = /^([01]\d|2[0-3]):([0-5]\d)-([01]\d|2[0-4]):([0-5]\d)$/;

/** Minutes after midnight, local to the window's zone: start inclusive, end exclusive. */
export interface WindowHours {
  start: number;
  end: number;
}

/**
 * "HH:MM-HH:MM" (24-hour clock, end 24:00 allowed) -> the hours, or the reason it is not a window.
 * A window whose end is before its start spans midnight (22:00-06:00).
 */
export function parseWindowHours(text: string): WindowHours | string {
  const m = HOURS_TEXT.exec(text.trim());
  if (!m) return 'expected HH:MM-HH:MM on a 24-hour clock, such as 08:00-22:00';
  const start = Number(m[1]) * 60 + Number(m[2]);
  const end = Number(m[3]) * 60 + Number(m[4]);
  if (end > MINUTES_PER_DAY) return 'expected an end no later than 24:00';
  if (start === end || (start === 0 && end === MINUTES_PER_DAY))
    return 'expected a window shorter than a day (leave it unset to send at any hour)';
  return { start, end };
}
