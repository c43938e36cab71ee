// What the report commands, the daemon's progress line and the sender ask of the journal, each a
// named read. Read-only; each query is an index range. The views (v_files, v_failures,
// v_recipients) are the report interface that users query too (migrations.ts).
import type { FileCounts, FileRecord } from './fileReads.js';
import type { Journal } from './connection.js';
import { sql, sqlPluck } from './sql.js';
import {
  BATCH_STATE,
  FILE_STATUS,
  OUTCOME_STATES,
  SETTLED_AS,
  SETTLED_STATES,
  sqlList,
  UNSETTLED_STATES,
} from './states.js';

/** A line of v_files. */
export interface FileLine extends FileCounts {
  id: number;
  name: string;
  sha256: string;
  status: string;
  started_at: string | null;
  finished_at: string | null;
}

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

/** Files still being read or sent. */
export function unfinishedFileLines(db: Journal): FileLine[] {
  return sql(
    db,
    `SELECT * FROM v_files WHERE status IN ${sqlList([FILE_STATUS.intake, FILE_STATUS.sending])} ORDER BY id`,
  ).all() as FileLine[];
}

export function repeatsOf(db: Journal, fileId: number): number {
  return sqlPluck(db, 'SELECT repeats FROM files WHERE id = ?').get(fileId) as number;
}

export interface FailureCount {
  status: 'failed' | 'unknown';
  status_code: string | null;
  count: number;
  sample_message: string | null;
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
    `SELECT count(*) AS requests, min(a.started_at) AS first_send, max(a.finished_at) AS last_send
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

/** Requests answered (or ended) since `since` (ISO), and when the first of them started. */
export function requestsFinishedSince(
  db: Journal,
  since: string,
): { count: number; first: string | null } {
  return sql(
    db,
    'SELECT count(*) AS count, min(started_at) AS first FROM attempts WHERE finished_at >= ?',
  ).get(since) as { count: number; first: string | null };
}

/** How often each of these status codes answered a request since `since` (ISO), commonest first. */
export function answersWithCodesSince(
  db: Journal,
  codes: readonly string[],
  since: string,
): Array<{ code: string; count: number }> {
  if (codes.length === 0) return [];
  return sql(
    db,
    `SELECT status_code AS code, count(*) AS count FROM attempts WHERE finished_at >= ? AND status_code IN (${codes.map(() => '?').join(', ')})
     GROUP BY status_code ORDER BY count DESC, status_code`,
  ).all(since, ...codes) as Array<{ code: string; count: number }>;
}

/** Numbers of the file whose batch got its outcome since `since` (ISO). */
export function numbersSettledSince(db: Journal, fileId: number, since: string): number {
  return sqlPluck(
    db,
    `SELECT coalesce(sum(numbers), 0) FROM batches WHERE file_id = ? AND state IN ${sqlList(OUTCOME_STATES)} AND updated_at >= ?`,
  ).get(fileId, since) as number;
}

/** Requests of the file out now, and their numbers. */
export function inFlight(db: Journal, fileId: number): { requests: number; numbers: number } {
  return sql(
    db,
    `SELECT count(*) AS requests, coalesce(sum(numbers), 0) AS numbers FROM batches WHERE file_id = ? AND state = '${BATCH_STATE.sending}'`,
  ).get(fileId) as {
    requests: number;
    numbers: number;
  };
}

/** The latest answered attempt of any file. */
export function lastAnswer(
  db: Journal,
): { outcome: string | null; status_code: string | null; finished_at: string } | undefined {
  return sql(
    db,
    'SELECT outcome, status_code, finished_at FROM attempts WHERE finished_at IS NOT NULL ORDER BY finished_at DESC LIMIT 1',
  ).get() as
    { outcome: string | null; status_code: string | null; finished_at: string } | undefined;
}

/** The most values any group of the file has. */
export function mostValues(db: Journal, fileId: number): number {
  return (
    (sqlPluck(db, 'SELECT max(json_array_length(datas)) FROM groups WHERE file_id = ?').get(
      fileId,
    ) as number | null) ?? 0
  );
}

/** A row of v_recipients as an export writes it. */
export interface RecipientRow {
  line: number;
  phone_raw: string;
  app_id: string | null;
  template_id: string | null;
  datas: string | null;
  extras: string | null;
  status: string;
  status_code: string | null;
  status_msg: string | null;
}

/**
 * The file's rows in file order (rows_by_file keeps them in row id order: nothing is sorted), of
 * these statuses (all: none given).
 */
export function recipients(
  db: Journal,
  fileId: number,
  statuses: readonly string[],
): IterableIterator<RecipientRow> {
  const filter = statuses.length > 0 ? `AND status IN (${statuses.map(() => '?').join(', ')})` : '';
  return sql(
    db,
    `SELECT line, phone_raw, app_id, template_id, datas, extras, status, status_code, status_msg
     FROM v_recipients WHERE file_id = ? ${filter} ORDER BY row_id`,
  ).iterate(fileId, ...statuses) as IterableIterator<RecipientRow>;
}

/**
 * Numbers still to send: in live batches (planned or being sent), of every file or of the files
 * with these hashes still sending.
 */
export function numbersToSend(db: Journal, sha256s?: readonly string[]): number {
  if (sha256s === undefined)
    return sqlPluck(
      db,
      `SELECT coalesce(sum(numbers), 0) FROM batches WHERE state IN ${sqlList(UNSETTLED_STATES)}`,
    ).get() as number;
  if (sha256s.length === 0) return 0;
  const marks = sha256s.map(() => '?').join(', ');
  return sqlPluck(
    db,
    `SELECT coalesce(sum(numbers), 0) FROM batches WHERE state IN ${sqlList(UNSETTLED_STATES)}
     AND file_id IN (SELECT id FROM files WHERE sha256 IN (${marks}) AND status = '${FILE_STATUS.sending}')`,
  ).get(...sha256s) as number;
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

/** A group of the file still to send: its message, and the numbers its live batches hold. */
export interface GroupToSend {
  templateId: string;
  /** The values, as a JSON array. */
  datas: string;
  numbers: number;
}

/**
 * The file's groups with numbers still to send, in the order they were read (the dry run's message
 * preview).
 */
export function groupsToSend(db: Journal, fileId: number): IterableIterator<GroupToSend> {
  return sql(
    db,
    `SELECT g.template_id AS templateId, g.datas AS datas, sum(b.numbers) AS numbers
     FROM batches b JOIN groups g ON g.id = b.group_id
     WHERE b.file_id = ? AND b.state IN ${sqlList(UNSETTLED_STATES)}
     GROUP BY b.group_id ORDER BY b.group_id`,
  ).iterate(fileId) as IterableIterator<GroupToSend>;
}

/** Rows of one template that give one number of values (valueCounts). */
export interface ValueCount {
  templateId: string;
  values: number;
  rows: number;
  firstLine: number;
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

// Figures of the daemon's /metrics and dashboard (http/), read when they are asked for: nothing on
// the sending path keeps them. The batches and attempts tables are a few rows per thousand numbers.

/** Files of each status. */
export function filesByStatus(db: Journal): Array<{ status: string; files: number }> {
  return sql(
    db,
    'SELECT status, count(*) AS files FROM files GROUP BY status ORDER BY status',
  ).all() as Array<{ status: string; files: number }>;
}

/** Rows of every file by status (v_files' counts summed: they add up to the rows). */
export function rowsByStatus(
  db: Journal,
): Record<'accepted' | 'failed' | 'unknown' | 'invalid' | 'duplicate' | 'pending', number> {
  return sql(
    db,
    `SELECT coalesce(sum(accepted), 0) AS accepted, coalesce(sum(failed), 0) AS failed, coalesce(sum(unknown), 0) AS unknown,
       coalesce(sum(invalid), 0) AS invalid, coalesce(sum(duplicates), 0) AS duplicate, coalesce(sum(pending), 0) AS pending FROM v_files`,
  ).get() as Record<
    'accepted' | 'failed' | 'unknown' | 'invalid' | 'duplicate' | 'pending',
    number
  >;
}

/**
 * Numbers with an outcome since the journal began, by outcome and provider status code ('' without
 * one): those of files still held, and pruned files' (pruned_totals). A number resent by `smsdrop
 * retry` counts once per outcome it got: a retried batch keeps its own (failed: never sent;
 * unknown: maybe sent). Never goes down.
 */
export function numbersByOutcome(
  db: Journal,
): Array<{ outcome: string; code: string; numbers: number }> {
  return sql(
    db,
    `SELECT outcome, code, sum(n) AS numbers FROM (
       SELECT ${SETTLED_AS} AS outcome, coalesce(status_code, '') AS code, sum(numbers) AS n
         FROM batches WHERE state IN ${sqlList(SETTLED_STATES)} AND ${NOT_PRUNED}
         GROUP BY outcome, status_code
       UNION ALL
       SELECT outcome, code, count AS n FROM pruned_totals WHERE kind = 'numbers')
     GROUP BY outcome, code ORDER BY outcome, code`,
  ).all() as Array<{ outcome: string; code: string; numbers: number }>;
}

/** Requests answered (or given up on) since the journal began, by outcome. Never goes down. */
export function requestsByOutcome(db: Journal): Array<{ outcome: string; requests: number }> {
  return sql(
    db,
    `SELECT outcome, sum(n) AS requests FROM (
       SELECT a.outcome, count(*) AS n FROM attempts a JOIN batches b ON b.id = a.batch_id
         WHERE a.outcome IS NOT NULL AND ${NOT_PRUNED} GROUP BY a.outcome
       UNION ALL
       SELECT outcome, count AS n FROM pruned_totals WHERE kind = 'requests')
     GROUP BY outcome ORDER BY outcome`,
  ).all() as Array<{ outcome: string; requests: number }>;
}

/**
 * A batch (alias b, or batches) of a file not marked pruned: a pruned file's records, on their way
 * out, are counted in pruned_totals already.
 */
const NOT_PRUNED = `file_id NOT IN (SELECT id FROM files WHERE pruned_at IS NOT NULL)`;

/** Per minute since `since` (ISO): requests answered and the numbers accepted by them. */
export function sendRateByMinute(
  db: Journal,
  since: string,
): Array<{ minute: string; requests: number; accepted: number }> {
  return sql(
    db,
    `SELECT substr(a.finished_at, 1, 16) AS minute, count(*) AS requests,
       coalesce(sum(CASE WHEN a.outcome = 'accepted' THEN b.numbers END), 0) AS accepted
     FROM attempts a JOIN batches b ON b.id = a.batch_id
     WHERE a.finished_at >= ? GROUP BY minute ORDER BY minute`,
  ).all(since) as Array<{ minute: string; requests: number; accepted: number }>;
}

/** A file whose rows the journal still holds: when it came, and when it ended (null: not yet). */
export interface HeldFile {
  id: number;
  name: string;
  status: string;
  created_at: string;
  finished_at: string | null;
}

/** The oldest file whose rows are still in the journal (not pruned), or undefined when none is. */
export function oldestHeldFile(db: Journal): HeldFile | undefined {
  return sql(
    db,
    'SELECT id, name, status, created_at, finished_at FROM files WHERE pruned_at IS NULL ORDER BY id LIMIT 1',
  ).get() as HeldFile | undefined;
}

/** How many files were pruned: only their line is left (prune.ts). */
export function prunedFileCount(db: Journal): number {
  return sqlPluck(db, 'SELECT count(*) FROM files WHERE pruned_at IS NOT NULL').get() as number;
}

/** The journal's records of these bytes, and whether each was pruned. */
export function recordsOfBytes(
  db: Journal,
  sha256: string,
): Array<{ id: number; pruned: boolean }> {
  const rows = sql(
    db,
    'SELECT id, pruned_at IS NOT NULL AS pruned FROM files WHERE sha256 = ?',
  ).all(sha256) as Array<{ id: number; pruned: number }>;
  return rows.map((r) => ({ id: r.id, pruned: r.pruned === 1 }));
}

/** When the file was pruned (null: it was not, its rows are all there). */
export function prunedAt(db: Journal, fileId: number): string | null {
  return (
    (sqlPluck(db, 'SELECT pruned_at FROM files WHERE id = ?').get(fileId) as
      string | null | undefined) ?? null
  );
}
