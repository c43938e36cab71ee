// What `smsdrop status` asks of either journal: files under way, requests and answers since a
// time, what is out now, and what the journal still holds. Each journal answers the rest of its
// StatusReads (nodes, size, health, the daemon's state) itself.
import type { FileLine, HeldFile } from '../ports/records.js';
import { BATCH_STATE, FILE_STATUS, OUTCOME_STATES, sqlList } from '../ports/states.js';
import { ATTEMPT_CODE } from './statusCodes.js';
import { all, type Dialect, get, type Rule } from './rule.js';

export type LastAnswer = {
  outcome: string | null;
  status_code: string | null;
  finished_at: string;
};

/** Files still being read or sent. */
export function unfinishedFileLines(): Rule<FileLine[]> {
  return all(
    `SELECT * FROM v_files WHERE status IN ${sqlList([FILE_STATUS.intake, FILE_STATUS.sending])} ORDER BY id`,
  );
}

/** Requests answered (or ended) since `since` (ISO), and when the first of them started. */
export function* requestsFinishedSince(
  d: Dialect,
  since: string,
): Rule<{ count: number; first: string | null }> {
  const row = yield* get<{ count: number; first: string | null }>(
    `SELECT count(*) AS count, ${d.timeText('min(started_at)')} AS first FROM attempts
     WHERE finished_at >= ${d.storedTime('?')}`,
    since,
  );
  return row!;
}

/** How often each of these status codes answered a request since `since` (ISO), commonest first. */
export function* answersWithCodesSince(
  d: Dialect,
  codes: readonly string[],
  since: string,
): Rule<Array<{ code: string; count: number }>> {
  if (codes.length === 0) return [];
  return yield* all<{ code: string; count: number }>(
    `SELECT ${ATTEMPT_CODE} AS code, count(*) AS count FROM attempts
     WHERE finished_at >= ${d.storedTime('?')} AND ${d.isIn(ATTEMPT_CODE)}
     GROUP BY ${ATTEMPT_CODE} ORDER BY count DESC, ${ATTEMPT_CODE}${d.byBytes}`,
    since,
    d.list(codes),
  );
}

/** Numbers of the file whose batch got its outcome since `since` (ISO). */
export function* numbersSettledSince(d: Dialect, fileId: number, since: string): Rule<number> {
  const row = yield* get<{ numbers: number }>(
    `SELECT coalesce(sum(numbers), 0) AS numbers FROM batches
     WHERE file_id = ? AND state IN ${sqlList(OUTCOME_STATES)} AND updated_at >= ${d.storedTime('?')}`,
    fileId,
    since,
  );
  return row!.numbers;
}

/** Requests of the file out now, and their numbers. */
export function* inFlight(fileId: number): Rule<{ requests: number; numbers: number }> {
  const row = yield* get<{ requests: number; numbers: number }>(
    `SELECT count(*) AS requests, coalesce(sum(numbers), 0) AS numbers FROM batches
     WHERE file_id = ? AND state = '${BATCH_STATE.sending}'`,
    fileId,
  );
  return row!;
}

/** The latest answered attempt of any file. */
export function lastAnswer(d: Dialect): Rule<LastAnswer | undefined> {
  return get(
    `SELECT outcome, ${ATTEMPT_CODE} AS status_code, ${d.timeText('finished_at')} AS finished_at FROM attempts
     WHERE finished_at IS NOT NULL ORDER BY attempts.finished_at${d.byBytes} DESC LIMIT 1`,
  );
}

/** The oldest file whose rows are still in the journal (not pruned), or undefined when none is. */
export function oldestHeldFile(): Rule<HeldFile | undefined> {
  return get(
    'SELECT id, name, status, created_at, finished_at FROM files WHERE pruned_at IS NULL ORDER BY id LIMIT 1',
  );
}

/** How many files were pruned: only their line is left (prune.ts). */
export function* prunedFileCount(): Rule<number> {
  const row = yield* get<{ files: number }>(
    'SELECT count(*) AS files FROM files WHERE pruned_at IS NOT NULL',
  );
  return row!.files;
}
