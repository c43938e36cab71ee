// What the report commands, the dry run and the sender ask of the journal about one file, each a
// named read. Read-only; each query is an index range. The views (v_files, v_failures,
// v_recipients) are the report interface that users query too (migrations.ts). The reads of
// `smsdrop status` (statusReads.ts), of /metrics (metricsReads.ts) and row by row (exportReads.ts)
// have files of their own; they are re-exported here for the callers that import them from here.
import type { Journal } from './connection.js';
import type { FailureCount, FileLine, FileRecord, ValueCount } from '../ports/records.js';
import { sql, sqlPluck } from './sql.js';
import { SQLITE_DIALECT } from './rules.js';
import { BATCH_STATE, sqlList, UNSETTLED_STATES } from '../ports/states.js';

export { groupsToSend, mostValues, recipients, recordsOfBytes } from './exportReads.js';
export {
  filesByStatus,
  filesWaiting,
  numbersByOutcome,
  numbersToSend,
  requestsByOutcome,
  rowsByStatus,
  sendRateByMinute,
} from './metricsReads.js';
export {
  answersWithCodesSince,
  inFlight,
  lastAnswer,
  numbersSettledSince,
  oldestHeldFile,
  prunedFileCount,
  requestsFinishedSince,
  unfinishedFileLines,
} from './statusReads.js';

export function listFiles(db: Journal): FileLine[] {
  return sql(db, 'SELECT * FROM v_files ORDER BY id').all() as FileLine[];
}

/** Ids of the files whose rows were pruned (SMSDROP_KEEP): their counts stay, their rows went. */
export function prunedFileIds(db: Journal): Set<number> {
  return new Set(
    sqlPluck(db, 'SELECT id FROM files WHERE pruned_at IS NOT NULL').all() as number[],
  );
}

export function fileLine(db: Journal, fileId: number): FileLine {
  return sql(db, 'SELECT * FROM v_files WHERE id = ?').get(fileId) as FileLine;
}

export function repeatsOf(db: Journal, fileId: number): number {
  return sqlPluck(db, 'SELECT repeats FROM files WHERE id = ?').get(fileId) as number;
}

export function failureCounts(db: Journal, fileId: number): FailureCount[] {
  return sql(
    db,
    'SELECT status, status_code, count, sample_message FROM v_failures WHERE file_id = ? ORDER BY count DESC, status, status_code',
  ).all(fileId) as FailureCount[];
}

/** The commonest reasons rows were invalid. */
export function invalidReasons(
  db: Journal,
  fileId: number,
  limit = 10,
): Array<{ reason: string; count: number }> {
  return sql(
    db,
    "SELECT error AS reason, count(*) AS count FROM rows WHERE file_id = ? AND intake = 'invalid' GROUP BY error ORDER BY count DESC, error LIMIT ?",
  ).all(fileId, limit) as Array<{ reason: string; count: number }>;
}

/** Invalid rows in line order, at most `limit`. */
export function invalidRows(
  db: Journal,
  fileId: number,
  limit: number,
): Array<{ line: number; reason: string }> {
  return sql(
    db,
    "SELECT line, error AS reason FROM rows WHERE file_id = ? AND intake = 'invalid' ORDER BY line LIMIT ?",
  ).all(fileId, limit) as Array<{ line: number; reason: string }>;
}

export function requestTiming(
  db: Journal,
  fileId: number,
): { requests: number; first_send: string | null; last_send: string | null } {
  // A pruned file's attempts are gone: their count and times were kept on its row (prune.ts).
  const kept = sql(
    db,
    'SELECT kept_requests AS requests, kept_first_send AS first_send, kept_last_send AS last_send FROM files WHERE id = ? AND pruned_at IS NOT NULL',
  ).get(fileId);
  if (kept)
    return kept as { requests: number; first_send: string | null; last_send: string | null };
  return sql(
    db,
    `SELECT count(*) AS requests, ${SQLITE_DIALECT.timeText('min(a.started_at)')} AS first_send,
       ${SQLITE_DIALECT.timeText('max(a.finished_at)')} AS last_send
     FROM batches b JOIN attempts a ON a.batch_id = b.id WHERE b.file_id = ?`,
  ).get(fileId) as { requests: number; first_send: string | null; last_send: string | null };
}

/** Files of this name, or whose sha256 starts with `shaPrefix`, oldest first. */
export function filesNamed(db: Journal, name: string): FileRecord[] {
  return sql(db, 'SELECT * FROM files WHERE name = ? ORDER BY id').all(name) as FileRecord[];
}
export function filesByShaPrefix(db: Journal, shaPrefix: string): FileRecord[] {
  return sql(db, 'SELECT * FROM files WHERE substr(sha256, 1, ?) = ? ORDER BY id').all(
    shaPrefix.length,
    shaPrefix.toLowerCase(),
  ) as FileRecord[];
}

/** The schema migrations applied to the journal (none: a new file, or unreadable). */
export function appliedMigrations(db: Journal): Set<number> {
  try {
    return new Set(sqlPluck(db, 'SELECT version FROM schema_migrations').all() as number[]);
  } catch {
    return new Set();
  }
}

/** What is left to send of a file: groups, requests and numbers of its live batches. */
export function planSummary(
  db: Journal,
  fileId: number,
): { groups: number; requests: number; numbers: number } {
  return sql(
    db,
    `SELECT count(DISTINCT group_id) AS groups, count(*) AS requests, coalesce(sum(numbers), 0) AS numbers
     FROM batches WHERE file_id = ? AND state IN ${sqlList(UNSETTLED_STATES)}`,
  ).get(fileId) as { groups: number; requests: number; numbers: number };
}

/**
 * The file's valid rows by template and number of values, only for templates given more than one
 * number of values (most rows first). Counted from the groups; the rows only for such templates.
 */
export function unevenValueCounts(db: Journal, fileId: number): ValueCount[] {
  const templates = sqlPluck(
    db,
    `SELECT template_id FROM groups WHERE file_id = ?
     GROUP BY template_id HAVING count(DISTINCT json_array_length(datas)) > 1 ORDER BY template_id`,
  ).all(fileId) as string[];
  if (templates.length === 0) return [];
  const counts = sql(
    db,
    `SELECT g.template_id AS templateId, json_array_length(g.datas) AS "values",
       count(*) AS rows, min(r.line) AS firstLine
     FROM groups g JOIN rows r ON r.group_id = g.id AND r.intake = 'valid'
     WHERE g.file_id = ? AND g.template_id = ?
     GROUP BY json_array_length(g.datas) ORDER BY rows DESC, "values"`,
  );
  return templates.flatMap((t) => counts.all(fileId, t) as ValueCount[]);
}

/** When the file's next planned batch is due (ms since the epoch), or null when none is planned. */
export function nextDueAt(db: Journal, fileId: number): number | null {
  return sqlPluck(
    db,
    `SELECT min(next_attempt_at) FROM batches WHERE file_id = ? AND state = '${BATCH_STATE.planned}'`,
  ).get(fileId) as number | null;
}

/** When the file was pruned (null: it was not, its rows are all there). */
export function prunedAt(db: Journal, fileId: number): string | null {
  return (
    (sqlPluck(db, 'SELECT pruned_at FROM files WHERE id = ?').get(fileId) as
      string | null | undefined) ?? null
  );
}
