// Files in the journal: identity is the SHA-256 of the bytes, so the same content under any name
// is the same file. A file has one generation unless an operator resends it on purpose.
import { createFile as createRule, recountFile as recountRule } from '../journalRules/files.js';
import { runRule, SQLITE_DIALECT } from './rules.js';
import { insideOf, type Journal } from './connection.js';
import { nowIso, sql, sqlRaw, sqlPluck } from './sql.js';
import { getFile } from './fileReads.js';
import type { FileRecord } from '../ports/records.js';
import { recordEvent } from './outbox.js';
import { FILE_STATUS, type FileStatus, sqlList, UNSETTLED_STATES } from '../ports/states.js';
import type { KeptRows, NewFile, WaitingFile } from '../ports/records.js';

/** Registers a file for intake (src/journalRules/files.ts), in a transaction of its own. */
export function createFile(db: Journal, file: NewFile): FileRecord {
  return createFileUnlessRecorded(db, file)!;
}

/** As createFile; undefined when the bytes' latest generation is no longer `seen` (the rule's). */
export function createFileUnlessRecorded(
  db: Journal,
  file: NewFile,
  seen?: number,
): FileRecord | undefined {
  const targets = insideOf(db).webhookTargets;
  const id = insideOf(db).transaction(() =>
    runRule(db, createRule(targets, file, nowIso(), seen)),
  )();
  return id === undefined ? undefined : getFile(db, id);
}

/**
 * Files not done, some of whose requests went out (refused, or stopped while being read or sent:
 * a crash, a pause), shorter than `size` bytes, longest first: a new file that begins with one
 * of them continues it (see adoptGrownFile). Otherwise a copy still being written when it was
 * taken, interrupted and then complete, would be a new file and send its first rows again.
 */
export function unfinishedWithSends(db: Journal, size: number): FileRecord[] {
  const unfinished = sql(
    db,
    "SELECT * FROM files WHERE status <> 'done' AND size < ? ORDER BY size DESC",
  ).all(size) as FileRecord[];
  return unfinished.filter((f) => attemptsOf(db, f.id) > 0);
}

/** The file `id` now stands for these (longer) bytes: a run over them continues it. */
export function adoptGrownFile(db: Journal, id: number, file: NewFile): FileRecord {
  insideOf(db).transaction(() => {
    sql(
      db,
      'UPDATE files SET sha256 = ?, name = ?, path = ?, size = ?, status = ?, error = NULL, finished_at = NULL WHERE id = ?',
    ).run(file.sha256, file.name, file.path, file.size, FILE_STATUS.intake, id);
    recordEvent(db, 'file.taken', id);
  })();
  return getFile(db, id)!;
}

/** A refused file read anew from its first row is planned for the provider of now. */
export function setFileProvider(db: Journal, id: number, provider: string): void {
  sql(db, 'UPDATE files SET provider = ? WHERE id = ?').run(provider, id);
}

/**
 * A refused file read anew is read in the encoding found now (a name or a setting may say another
 * than the bytes did: an ambiguous file settled), which a file growing from it must share.
 */
export function setFileEncoding(db: Journal, id: number, encoding: string): void {
  sql(db, 'UPDATE files SET encoding = ? WHERE id = ?').run(encoding, id);
}

/**
 * Done and refused are webhook events (file.finished, file.failed), written in the same
 * transaction.
 */
export function setFileStatus(db: Journal, id: number, status: FileStatus, error?: string): void {
  const finished = status === FILE_STATUS.done || status === FILE_STATUS.refused ? nowIso() : null;
  const update = () =>
    sql(db, 'UPDATE files SET status = ?, error = ?, finished_at = ? WHERE id = ?').run(
      status,
      error ?? null,
      finished,
      id,
    );
  if (insideOf(db).webhookTargets.length === 0 || finished === null) {
    update();
    return;
  }
  insideOf(db).transaction(() => {
    update();
    recordEvent(db, status === FILE_STATUS.done ? 'file.finished' : 'file.failed', id, error);
  })();
}

/** The header as written, and which columns were kept as extras (not sent). */
export function setFileHeader(
  db: Journal,
  id: number,
  header: { columns: string[]; extras: string[] },
): void {
  sql(db, 'UPDATE files SET header = ? WHERE id = ?').run(JSON.stringify(header), id);
}

// keptGroups: an intake thrown away or redone keeps the file's groups. The intake that reads the
// file again finds each one by its values and uses it again, and pruning removes them with the
// file. Deleting them would scan the whole rows table per group (rows.group_id's foreign key has no
// index of its own): seconds for a file of thousands of groups, deaf to SIGTERM all the while.

/** An intake cut short (crash, signal) is thrown away and redone: nothing was sent yet. */
export function discardIntake(db: Journal, fileId: number): void {
  insideOf(db).transaction(() => {
    sql(
      db,
      'DELETE FROM attempts WHERE batch_id IN (SELECT id FROM batches WHERE file_id = ?)',
    ).run(fileId);
    sql(
      db,
      'DELETE FROM batch_numbers WHERE batch_id IN (SELECT id FROM batches WHERE file_id = ?)',
    ).run(fileId);
    sql(db, 'DELETE FROM batches WHERE file_id = ?').run(fileId);
    sql(db, 'DELETE FROM rows WHERE file_id = ?').run(fileId);
    sql(db, 'DELETE FROM invalid_cells WHERE file_id = ?').run(fileId);
    // The file's groups stay (see keptGroups), for the intake that reads it again.
    sql(db, 'UPDATE files SET rows = 0, invalid = 0, duplicates = 0, repeats = 0 WHERE id = ?').run(
      fileId,
    );
  })();
}

/**
 * Before a file is read (again): clears what an earlier, unfinished intake wrote, except what a
 * request may have carried. Since sending starts while a file is read, an intake cut short (a
 * crash, a file refused late) can leave batches that were sent: those (any batch with an
 * attempt, and the halves split from one) stay, with their rows; everything else is written
 * again from the file. Returns the rows kept, by line: intake moves each to the end of the table
 * when it reaches its line, so the file's rows stay in line order (the result file relies on it).
 */

export function restartIntake(db: Journal, fileId: number): KeptRows {
  // By the attempts table, not batches.attempts: an attempt answered "rate-limited" or
  // "account problem" is given back in that counter, but its row stays (and the batch with it).
  const kept = `SELECT id FROM batches b WHERE b.file_id = ? AND (b.parent_id IS NOT NULL OR EXISTS (SELECT 1 FROM attempts a WHERE a.batch_id = b.id))`;
  const keptCount = sqlPluck(db, `SELECT count(*) FROM (${kept})`).get(fileId) as number;
  if (keptCount === 0) {
    discardIntake(db, fileId);
    return { lines: new Int32Array(0), ids: new Float64Array(0) };
  }
  insideOf(db).transaction(() => {
    sql(
      db,
      `DELETE FROM rows WHERE file_id = ? AND (batch_id IS NULL OR batch_id NOT IN (${kept}))`,
    ).run(fileId, fileId);
    sql(db, 'DELETE FROM invalid_cells WHERE file_id = ?').run(fileId); // invalid rows have no batch: all gone above
    sql(
      db,
      `DELETE FROM batch_numbers WHERE batch_id IN (SELECT id FROM batches WHERE file_id = ? AND id NOT IN (${kept}))`,
    ).run(fileId, fileId);
    sql(db, `DELETE FROM batches WHERE file_id = ? AND id NOT IN (${kept})`).run(fileId, fileId);
    // The file's groups stay (see keptGroups).
    sql(db, 'UPDATE files SET rows = 0, invalid = 0, duplicates = 0, repeats = 0 WHERE id = ?').run(
      fileId,
    );
  })();
  const rows = sqlRaw(db, 'SELECT line, id FROM rows WHERE file_id = ? ORDER BY line').all(
    fileId,
  ) as [number, number][];
  return { lines: Int32Array.from(rows, (r) => r[0]), ids: Float64Array.from(rows, (r) => r[1]) };
}

/** The file's row counts from its rows (src/journalRules/files.ts). */
export function recountFile(db: Journal, fileId: number): void {
  runRule(db, recountRule(fileId));
}

/**
 * The files whose rows this file's repeats point at while those rows are not sent yet (planned,
 * or in flight): they go only when that file goes on. Empty for a file without repeats.
 */
export function waitingRepeats(db: Journal, fileId: number): WaitingFile[] {
  // Only a file not done can still hold rows not sent: with none, the rows of a file that repeats a
  // million of a done list's rows are not walked (a second each).
  const unfinished = sqlPluck(
    db,
    "SELECT EXISTS (SELECT 1 FROM files WHERE status != 'done' AND id != ?)",
  ).get(fileId);
  if (!unfinished) return [];
  return sql(
    db,
    `SELECT o.file_id AS id, f.name, f.status, count(*) AS rows
     FROM rows r JOIN rows o ON o.id = r.duplicate_of JOIN batches b ON b.id = o.batch_id JOIN files f ON f.id = o.file_id
     WHERE r.file_id = ? AND r.intake = 'duplicate' AND o.file_id != r.file_id AND b.state IN ${sqlList(UNSETTLED_STATES)}
     GROUP BY o.file_id ORDER BY o.file_id`,
  ).all(fileId) as WaitingFile[];
}

/** Requests made so far for the file's batches (every attempt, whatever its answer). */
export function attemptsOf(db: Journal, fileId: number): number {
  return sqlPluck(
    db,
    'SELECT count(*) FROM attempts a JOIN batches b ON b.id = a.batch_id WHERE b.file_id = ?',
  ).get(fileId) as number;
}

/**
 * When the file last got somewhere: the latest of the start of its last request the provider
 * accepted, its first taking (created_at) and its last (taken_at). Requests refused or unanswered
 * (an account problem tried again every cooldown) are not progress: a file paused for days has
 * not moved for days.
 */
export function lastProgressAt(db: Journal, file: FileRecord): string {
  const accepted = sqlPluck(
    db,
    `SELECT ${SQLITE_DIALECT.timeText('max(a.started_at)')} FROM attempts a JOIN batches b ON b.id = a.batch_id
     WHERE b.file_id = ? AND a.outcome = 'accepted'`,
  ).get(file.id) as string | null;
  return [accepted, file.taken_at].reduce<string>(
    (latest, at) => (at !== null && at > latest ? at : latest),
    file.created_at,
  );
}

/** The daemon took these bytes from inbox/ now: their unfinished record, if any, moved now. */
export function noteTaken(db: Journal, sha256: string): void {
  const id = sqlPluck(
    db,
    "SELECT id FROM files WHERE sha256 = ? AND status IN ('intake', 'sending') ORDER BY generation DESC LIMIT 1",
  ).get(sha256) as number | undefined;
  if (id === undefined) return; // a new file: createFile records it (and its webhook event)
  insideOf(db).transaction(() => {
    sql(db, 'UPDATE files SET taken_at = ? WHERE id = ?').run(nowIso(), id);
    recordEvent(db, 'file.taken', id);
  })();
}
