// The PostgreSQL journal's reads of a file's record, as the SQLite journal's (journal/files.ts,
// fileReads.ts, reportReads.ts planSummary), one statement each; and the webhook event written
// with a file's moves (journal/outbox.ts, recordEvent), in the caller's transaction.
import { recordEvent } from '../journalRules/events.js';
import { runRule } from './rules.js';
import type pg from 'pg';
import type { FileCounts, FileRecord, WaitingFile, WebhookEvent } from '../ports/index.js';
import { sqlList, UNSETTLED_STATES } from '../ports/states.js';

export type Db = pg.Pool | pg.ClientBase;

export async function latestFile(db: Db, sha256: string): Promise<FileRecord | undefined> {
  const { rows } = await db.query<FileRecord>(
    'SELECT * FROM files WHERE sha256 = $1 ORDER BY generation DESC LIMIT 1',
    [sha256],
  );
  return rows[0];
}

export async function fileById(db: Db, id: number): Promise<FileRecord | undefined> {
  const { rows } = await db.query<FileRecord>('SELECT * FROM files WHERE id = $1', [id]);
  return rows[0];
}

/** Row counts by final status and requests made: the file's line of v_files. */
export async function countFile(db: Db, fileId: number): Promise<FileCounts> {
  const { rows } = await db.query<FileCounts>(
    `SELECT v.rows::int AS rows, v.invalid, v.duplicates, f.repeats, v.accepted::int AS accepted,
       v.failed::int AS failed, v.unknown::int AS unknown, v.cancelled::int AS cancelled, v.pending::int AS pending, v.requests::int AS requests
     FROM v_files v JOIN files f ON f.id = v.id WHERE v.id = $1`,
    [fileId],
  );
  return rows[0]!;
}

/** Requests made so far for the file's batches (every attempt, whatever its answer). */
export async function attemptsOf(db: Db, fileId: number): Promise<number> {
  const { rows } = await db.query<{ n: number }>(
    'SELECT count(*)::int AS n FROM attempts a JOIN batches b ON b.id = a.batch_id WHERE b.file_id = $1',
    [fileId],
  );
  return rows[0]!.n;
}

/** As SQLite's unfinishedWithSends: files not done, shorter, with a request made, longest first. */
export async function unfinishedWithSends(db: Db, size: number): Promise<FileRecord[]> {
  const { rows } = await db.query<FileRecord>(
    `SELECT * FROM files f WHERE f.status <> 'done' AND f.size < $1
       AND EXISTS (SELECT 1 FROM batches b JOIN attempts a ON a.batch_id = b.id WHERE b.file_id = f.id)
     ORDER BY f.size DESC`,
    [size],
  );
  return rows;
}

/** As SQLite's lastProgressAt: the latest of an accepted request's start, created_at, taken_at. */
export async function lastProgressAt(db: Db, file: FileRecord): Promise<string> {
  const { rows } = await db.query<{ at: string | null }>(
    "SELECT max(a.started_at) AS at FROM attempts a JOIN batches b ON b.id = a.batch_id WHERE b.file_id = $1 AND a.outcome = 'accepted'",
    [file.id],
  );
  return [rows[0]!.at, file.taken_at].reduce<string>(
    (latest, at) => (at !== null && at > latest ? at : latest),
    file.created_at,
  );
}

/** As SQLite's waitingRepeats: files whose unsent rows this file's repeats point at. */
export async function waitingRepeats(db: Db, fileId: number): Promise<WaitingFile[]> {
  const { rows } = await db.query<WaitingFile>(
    `SELECT o.file_id AS id, f.name, f.status, count(*)::int AS rows
     FROM rows r JOIN rows o ON o.id = r.duplicate_of JOIN batches b ON b.id = o.batch_id JOIN files f ON f.id = o.file_id
     WHERE r.file_id = $1 AND r.intake = 'duplicate' AND o.file_id != r.file_id AND b.state IN ${sqlList(UNSETTLED_STATES)}
       AND EXISTS (SELECT 1 FROM files u WHERE u.status != 'done' AND u.id != $1)
     GROUP BY o.file_id, f.name, f.status ORDER BY o.file_id`,
    [fileId],
  );
  return rows;
}

export async function planSummary(
  db: Db,
  fileId: number,
): Promise<{ groups: number; requests: number; numbers: number }> {
  const { rows } = await db.query<{ groups: number; requests: number; numbers: number }>(
    `SELECT count(DISTINCT group_id)::int AS groups, count(*)::int AS requests,
       coalesce(sum(numbers), 0)::int AS numbers
     FROM batches WHERE file_id = $1 AND state IN ${sqlList(UNSETTLED_STATES)}`,
    [fileId],
  );
  return rows[0]!;
}

/** A file's webhook event, one outbox row per target, in the caller's transaction. */
export function recordFileEvent(
  db: pg.ClientBase,
  targets: readonly string[],
  event: WebhookEvent,
  fileId: number,
  reason?: string,
): Promise<void> {
  return runRule(db, recordEvent(targets, event, fileId, reason, new Date().toISOString()));
}
