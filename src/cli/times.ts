// A file's times in the summaries of send, resume and retry: this run's, and the file's own, which
// a resume does not start again: its runs' time summed (journalRules/runs.ts), and the time since
// it was first taken.
import type { FileRecord } from '../ports/index.js';
import { runTimeMs, sinceTakenMs } from '../journalRules/runs.js';
import { formatDuration } from '../log/duration.js';

export interface FileTimes {
  /** Its runs' time, summed over every run, this one included. */
  sendingMs: number;
  /** Since it was first taken, up to its end (or now). */
  sinceTakenMs: number;
}

/** The file's times as the journal has them `now` (undefined: no record). */
export function fileTimesOf(file: FileRecord | undefined, now = Date.now()): FileTimes | undefined {
  if (!file) return undefined;
  const at = new Date(now).toISOString();
  return { sendingMs: runTimeMs(file, at), sinceTakenMs: sinceTakenMs(file, at) };
}

/**
 * "elapsed 78.4 s (this run); the file: 2 min 41 s sending over every run, 2 min 50 s since
 * taken".
 */
export function elapsedText(elapsedMs: number, times: FileTimes | undefined): string {
  const run = `elapsed ${(elapsedMs / 1000).toFixed(1)} s`;
  if (!times) return run;
  return `${run} (this run); the file: ${formatDuration(times.sendingMs / 1000)} sending over every run, ${formatDuration(times.sinceTakenMs / 1000)} since taken`;
}
