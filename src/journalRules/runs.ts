// A file's runs and reading, on either journal: the time the runs that sent it took (send,
// resume, retry, the daemon: each one from its start to its end, summed), and how far a file being
// read has been read. `smsdrop status`, the progress line and the summaries read them: a file's
// time does not start again at each resume, and its rows are estimated before they are counted.
import { type Dialect, get, type Rule, run } from './rule.js';

/** Milliseconds from one ISO time to another, never below 0 (a clock set back). */
function msBetween(from: string, to: string): number {
  const ms = Date.parse(to) - Date.parse(from);
  return Number.isFinite(ms) && ms > 0 ? Math.round(ms) : 0;
}

/**
 * A run of the file starts `now`. A run cut off before its end (a crash, a kill) left its start:
 * its time counts up to its last request, the last thing known of it.
 */
export function* startRun(d: Dialect, fileId: number, now: string): Rule<void> {
  const left = yield* get<{ started: string | null; last: string | null }>(
    `SELECT f.run_started_at AS started,
       (SELECT ${d.timeText('max(a.started_at)')} FROM attempts a JOIN batches b ON b.id = a.batch_id
         WHERE b.file_id = f.id AND a.started_at >= ${d.storedTime('f.run_started_at')}) AS last
     FROM files f WHERE f.id = ?`,
    fileId,
  );
  const cutOff = left?.started && left.last ? msBetween(left.started, left.last) : 0;
  yield* run(
    'UPDATE files SET run_ms = run_ms + ?, run_started_at = ? WHERE id = ?',
    cutOff,
    now,
    fileId,
  );
}

/** The file's run going on ends `now`: its time is added to the file's. */
export function* endRun(fileId: number, now: string): Rule<void> {
  const open = yield* get<{ started: string | null }>(
    'SELECT run_started_at AS started FROM files WHERE id = ?',
    fileId,
  );
  if (!open?.started) return;
  yield* run(
    'UPDATE files SET run_ms = run_ms + ?, run_started_at = NULL WHERE id = ?',
    msBetween(open.started, now),
    fileId,
  );
}

/** The file being read has been read up to `bytes`. */
export function* noteReadBytes(fileId: number, bytes: number): Rule<void> {
  yield* run('UPDATE files SET read_bytes = ? WHERE id = ?', bytes, fileId);
}

/**
 * A file's run time so far (ms): the runs that ended, and the one going on up to `now`, if any.
 */
export function runTimeMs(
  file: { run_ms: number; run_started_at: string | null },
  now: string,
): number {
  return file.run_ms + (file.run_started_at ? msBetween(file.run_started_at, now) : 0);
}

/** Time since the file was first taken (ms), up to its end, or `now` if it has none yet. */
export function sinceTakenMs(
  file: { created_at: string; finished_at: string | null },
  now: string,
): number {
  return msBetween(file.created_at, file.finished_at ?? now);
}
