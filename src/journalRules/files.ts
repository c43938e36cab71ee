// Rules on a file's record and row counts, and the predicates both journals' reads and prune share.
import type { NewFile } from '../ports/records.js';
import {
  BATCH_STATE,
  FILE_CONTROL,
  FILE_STATUS,
  sqlList,
  UNSETTLED_STATES,
} from '../ports/states.js';
import { recordEvent } from './events.js';
import { get, type Rule, run } from './rule.js';

/**
 * The file's row counts from its rows (a file whose intake stopped before its writer could count,
 * or whose rows a retry turned into repeats).
 */
export function* recountFile(fileId: number): Rule<void> {
  yield* run(
    `UPDATE files SET rows = (SELECT count(*) FROM rows WHERE file_id = ?),
       invalid = (SELECT count(*) FROM rows WHERE file_id = ? AND intake = 'invalid'),
       duplicates = (SELECT count(*) FROM rows WHERE file_id = ? AND intake = 'duplicate'),
       repeats = (SELECT count(*) FROM rows r WHERE r.file_id = ? AND r.intake = 'duplicate'
                    AND (SELECT o.file_id FROM rows o WHERE o.id = r.duplicate_of) != ?)
     WHERE id = ?`,
    ...Array<number>(6).fill(fileId),
  );
}

/**
 * SQL: batch `b` of a file may still be sent by a later run, or is counted by the repeat window
 * whenever it started: in flight (or cut off in flight), or planned after an attempt or a split.
 */
const MAY_STILL_GO = `(b.state = '${BATCH_STATE.sending}' OR b.parent_id IS NOT NULL OR EXISTS (SELECT 1 FROM attempts a WHERE a.batch_id = b.id))`;

/**
 * SQL: file `f` holds a batch a later run may still send (so prune keeps it, whatever its age).
 */
export const FILE_MAY_STILL_GO = `EXISTS (SELECT 1 FROM batches b WHERE b.file_id = f.id AND b.state IN ${sqlList(UNSETTLED_STATES)}
  AND ${MAY_STILL_GO})`;

/**
 * SQL: batch `b` of file `f` holds numbers the repeat window counts (journal/sentBefore.ts says
 * which and why); `since` is the parameter's SQL (the window's start, ISO).
 */
export function countedByRepeatWindow(since: string): string {
  return `(b.state = '${BATCH_STATE.sending}'
  OR (b.state = '${BATCH_STATE.planned}' AND (f.status = 'sending' OR ${MAY_STILL_GO}))
  OR (b.state IN ${sqlList([BATCH_STATE.accepted, BATCH_STATE.unknown])} AND EXISTS (SELECT 1 FROM attempts a WHERE a.batch_id = b.id AND a.started_at >= ${since})))`;
}

/** Who holds a file read with approval on. */
const HELD_BY = 'SMSDROP_APPROVAL';

/**
 * Registers a file for intake, its generation one more than any earlier record of the same bytes,
 * with its file.taken webhook event (the daemon's record of a new drop); the file's id. With
 * `seen` (the latest generation the caller found, 0 for none): nothing is made, and undefined
 * returned, when another process recorded the bytes since; two nodes given the same bytes at
 * once would otherwise each make a record of its own, and read and close the second as a
 * duplicate of the first.
 */
export function* createFile(
  targets: readonly string[],
  file: NewFile,
  now: string,
  seen?: number,
): Rule<number | undefined> {
  const created = yield* get<{ id: number }>(
    `INSERT INTO files (sha256, generation, name, path, size, encoding, status, created_at, started_at, provider, control, control_by, control_at)
     SELECT ?, coalesce(max(generation), 0) + 1, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ? FROM files WHERE sha256 = ?
     HAVING CAST(? AS INTEGER) IS NULL OR coalesce(max(generation), 0) = CAST(? AS INTEGER)
     RETURNING id`,
    file.sha256,
    file.name,
    file.path,
    file.size,
    file.encoding,
    FILE_STATUS.intake,
    now,
    now,
    file.provider ?? null,
    file.held ? FILE_CONTROL.held : null,
    file.held ? HELD_BY : null,
    file.held ? now : null,
    file.sha256,
    seen ?? null,
    seen ?? null,
  );
  if (!created) return undefined;
  yield* recordEvent(targets, 'file.taken', created.id, undefined, now);
  return created.id;
}
