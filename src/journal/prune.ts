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
// thousand at a time, and the WAL is emptied with a TRUNCATE checkpoint once no transaction is
// open.
import { FILE_MAY_STILL_GO } from '../journalRules/files.js';
import { connectionOf, insideOf, type Journal } from './connection.js';
import type { BusyFiles } from '../ports/maintenance.js';
import { nowIso, sql, sqlPluck } from './sql.js';
import { SQLITE_DIALECT } from './rules.js';
import { FILE_STATUS, SETTLED_AS, SETTLED_STATES, sqlList } from '../ports/states.js';
import { checkpointTruncate, freePages, incrementalVacuum, journalSize } from './storage.js';
import { writeQueueFor } from './writeQueue.js';
import type {
  FileToPrune,
  PruneOptions,
  PruneResult,
  PruneStep,
  PrunedRecords,
} from '../ports/records.js';
import { batchCode } from '../journalRules/statusCodes.js';

/** Records deleted per step: a step is one write of the queue, and requests wait for it. */
export const PRUNE_STEP_RECORDS = 2_000;
/** Free pages cut off the file per step (8 MB with 4 KB pages). */
const VACUUM_STEP_PAGES = 2_000;

/**
 * Batches of file `f` that a later run may still send, or that the repeat window counts whenever
 * they started (sentBefore.ts).
 */
const MAY_STILL_GO = FILE_MAY_STILL_GO;

/**
 * Files that ended (done or refused) before `endedBefore` (ISO), not pruned yet, not busy and
 * holding nothing that may still go, oldest first.
 */
export function filesToPrune(db: Journal, endedBefore: string, busy: BusyFiles): FileToPrune[] {
  const files = sql(
    db,
    `SELECT f.id, f.name, f.sha256, f.status, f.finished_at FROM files f
     WHERE f.pruned_at IS NULL AND f.finished_at < ? AND f.status IN ${sqlList([FILE_STATUS.done, FILE_STATUS.refused])} AND NOT ${MAY_STILL_GO}
     ORDER BY f.finished_at`,
  ).all(endedBefore) as FileToPrune[];
  return files.filter((f) => !busy.has(f.id));
}

/** What pruning file `fileId` deletes. */
export function recordsOf(db: Journal, fileId: number): PrunedRecords {
  return sql(
    db,
    `SELECT (SELECT count(*) FROM rows WHERE file_id = :id) AS rows, (SELECT count(*) FROM groups WHERE file_id = :id) AS groups,
       (SELECT count(*) FROM batches WHERE file_id = :id) AS batches,
       (SELECT count(*) FROM batches b JOIN attempts a ON a.batch_id = b.id WHERE b.file_id = :id) AS attempts`,
  ).get({ id: fileId }) as PrunedRecords;
}

/**
 * Stores the file's counts and request times on its row and marks it pruned, in one write: from
 * then on v_files and the report read them there, while its rows go. False when the file is no
 * longer one to prune (it is being processed again, say).
 */
export function markPruned(db: Journal, fileId: number, busy: BusyFiles): boolean {
  if (busy.has(fileId)) return false;
  return insideOf(db).transaction(() => {
    const marked = markPrunedRow(db, fileId);
    if (marked) keepTotals(db, fileId);
    return marked;
  })();
}

function markPrunedRow(db: Journal, fileId: number): boolean {
  const info = sql(
    db,
    `UPDATE files SET (kept_accepted, kept_failed, kept_unknown, kept_pending, kept_requests, kept_cancelled) =
       (SELECT accepted, failed, unknown, pending, requests, cancelled FROM v_files WHERE id = :id),
     (kept_first_send, kept_last_send) =
       (SELECT ${SQLITE_DIALECT.timeText('min(a.started_at)')}, ${SQLITE_DIALECT.timeText('max(a.finished_at)')}
        FROM batches b JOIN attempts a ON a.batch_id = b.id WHERE b.file_id = :id),
     pruned_at = :now
     WHERE id = :id AND pruned_at IS NULL`,
  ).run({ id: fileId, now: nowIso() });
  return info.changes === 1;
}

/** Adds what the file sent to pruned_totals, so that /metrics' counters never go down. */
function keepTotals(db: Journal, fileId: number): void {
  sql(
    db,
    `INSERT INTO pruned_totals (kind, outcome, code, count)
     SELECT 'numbers', ${SETTLED_AS} AS outcome, coalesce(${batchCode('batches')}, '') AS code, sum(numbers) FROM batches
       WHERE file_id = :id AND state IN ${sqlList(SETTLED_STATES)} GROUP BY outcome, code
     UNION ALL
     SELECT 'requests', a.outcome, '', count(*) FROM batches b JOIN attempts a ON a.batch_id = b.id
       WHERE b.file_id = :id AND a.outcome IS NOT NULL GROUP BY a.outcome
     ON CONFLICT (kind, outcome, code) DO UPDATE SET count = count + excluded.count`,
  ).run({ id: fileId });
}

/**
 * The deletes of a pruned file's records that hold numbers and values, children first; each takes
 * up to :limit.
 */
const DELETES = [
  'DELETE FROM attempts WHERE id IN (SELECT a.id FROM batches b JOIN attempts a ON a.batch_id = b.id WHERE b.file_id = :id LIMIT :limit)',
  'DELETE FROM batch_numbers WHERE batch_id IN (SELECT n.batch_id FROM batches b JOIN batch_numbers n ON n.batch_id = b.id WHERE b.file_id = :id LIMIT :limit)',
  'DELETE FROM rows WHERE id IN (SELECT id FROM rows WHERE file_id = :id LIMIT :limit)',
  'DELETE FROM invalid_cells WHERE row_id IN (SELECT row_id FROM invalid_cells WHERE file_id = :id LIMIT :limit)',
  // The values: blanked here, the group rows themselves go in deleteParentsStep.
  "UPDATE groups SET app_id = '', app = NULL, template_id = '', datas = '[]', key_hash = 0 WHERE id IN (SELECT id FROM groups WHERE file_id = :id AND datas <> '[]' LIMIT :limit)",
];

/**
 * Deletes (or blanks) up to `limit` records of a pruned file that hold numbers or values; returns
 * how many (0: none is left).
 */
export function deleteStep(db: Journal, fileId: number, limit = PRUNE_STEP_RECORDS): number {
  if (sqlPluck(db, 'SELECT pruned_at IS NULL FROM files WHERE id = ?').get(fileId) !== 0) return 0; // marked first, always
  for (const text of DELETES) {
    const changes = sql(db, text).run({ id: fileId, limit }).changes;
    if (changes > 0) return changes;
  }
  return 0;
}

/**
 * Deletes up to `limit` of the pruned file's batches, then its groups, once the rest is gone
 * (deleteStep); returns how many, or undefined when a transaction is open (try again later).
 *
 * Why not through the write queue: with foreign keys on (better-sqlite3's default), deleting a
 * batch or a group makes SQLite look for rows pointing at it, and neither batches.parent_id nor
 * rows.group_id has an index (intake is quicker without: migration 4), so each is a scan of the
 * whole table, for every group: far too long for one step. Nothing points at them any
 * more (a batch and a group belong to one file, whose rows went first), so the check is turned off
 * for the statement, which SQLite allows only outside a transaction: the step runs at a moment when
 * none is open, in one turn of the event loop, in its own transaction.
 */
export function deleteParentsStep(
  db: Journal,
  fileId: number,
  limit = PRUNE_STEP_RECORDS,
): number | undefined {
  if (connectionOf(db).inTransaction) return undefined;
  if (sqlPluck(db, 'SELECT pruned_at IS NULL FROM files WHERE id = ?').get(fileId) !== 0) return 0;
  connectionOf(db).pragma('foreign_keys = OFF');
  try {
    for (const table of ['batches', 'groups']) {
      const changes = sql(
        db,
        `DELETE FROM ${table} WHERE id IN (SELECT id FROM ${table} WHERE file_id = :id LIMIT :limit)`,
      ).run({ id: fileId, limit }).changes;
      if (changes > 0) return changes;
    }
    return 0;
  } finally {
    connectionOf(db).pragma('foreign_keys = ON');
  }
}

/**
 * Forgets suppressed numbers added before `before` (ISO): only when asked, the list is a
 * do-not-contact list.
 */
export function forgetSuppressedBefore(db: Journal, before: string, dryRun: boolean): number {
  if (dryRun)
    return sqlPluck(db, 'SELECT count(*) FROM suppressed WHERE added_at < ?').get(before) as number;
  return sql(db, 'DELETE FROM suppressed WHERE added_at < ?').run(before).changes;
}

/**
 * Prunes every file that ended before `endedBefore` and is not busy, step by step through the
 * write queue (see the top of this file). With dryRun, only says what it would delete.
 */
export async function pruneJournal(
  db: Journal,
  options: PruneOptions,
  busy: BusyFiles,
): Promise<PruneResult> {
  const files = filesToPrune(db, options.endedBefore, busy);
  const records: PrunedRecords = { rows: 0, groups: 0, batches: 0, attempts: 0 };
  for (const f of files) addRecords(records, recordsOf(db, f.id));
  const bytesBefore = journalSize(db).bytes;
  const result = {
    files,
    records,
    suppressed: 0,
    bytesBefore,
    bytesAfter: bytesBefore,
    checkpointed: false,
  };
  if (options.dryRun)
    return {
      ...result,
      suppressed: options.suppressed ? forgetSuppressedBefore(db, options.endedBefore, true) : 0,
    };
  const queue = writeQueueFor(db);
  const step = async <T>(what: PruneStep, write: () => T): Promise<T> => {
    const started = performance.now();
    let ownMs = 0;
    const value = await queue.run(() => {
      const own = performance.now();
      const written = write();
      ownMs = performance.now() - own;
      return written;
    });
    options.onStep?.(what, ownMs, performance.now() - started);
    return value;
  };
  const pruned: FileToPrune[] = [];
  for (const f of files) {
    if (options.signal?.aborted) break;
    if (!(await step('mark', () => markPruned(db, f.id, busy)))) continue;
    pruned.push(f);
    while (!options.signal?.aborted && (await step('delete', () => deleteStep(db, f.id))) > 0);
    await deleteParents(db, f.id, options);
  }
  const suppressed = options.suppressed
    ? await step('suppressed', () => forgetSuppressedBefore(db, options.endedBefore, false))
    : 0;
  while (!options.signal?.aborted && (await step('vacuum', () => vacuumStep(db))) > 0);
  const checkpointStart = performance.now();
  const checkpointed = connectionOf(db).inTransaction ? false : !checkpointTruncate(db).busy;
  options.onStep?.(
    'checkpoint',
    performance.now() - checkpointStart,
    performance.now() - checkpointStart,
  );
  return { ...result, files: pruned, suppressed, bytesAfter: journalSize(db).bytes, checkpointed };
}

/**
 * How long to wait for a moment with no transaction open (an intake commits at least every 2 s).
 */
const NO_TRANSACTION_POLL_MS = 100;

/**
 * The file's batches and groups, a step at a time, each when no transaction is open
 * (deleteParentsStep).
 */
async function deleteParents(db: Journal, fileId: number, options: PruneOptions): Promise<void> {
  while (!options.signal?.aborted) {
    const started = performance.now();
    const deleted = deleteParentsStep(db, fileId);
    if (deleted === 0) return;
    if (deleted === undefined)
      await new Promise((resolve) => setTimeout(resolve, NO_TRANSACTION_POLL_MS));
    else {
      options.onStep?.('delete', performance.now() - started, performance.now() - started);
      // requests get their turn between steps
      await new Promise((resolve) => setImmediate(resolve));
    }
  }
}

/** Cuts up to VACUUM_STEP_PAGES free pages off the file; returns how many are left. */
function vacuumStep(db: Journal): number {
  const before = freePages(db);
  if (before === 0) return 0;
  incrementalVacuum(db, VACUUM_STEP_PAGES);
  const after = freePages(db);
  return after < before ? after : 0; // none given back (not expected): stop rather than loop
}

function addRecords(total: PrunedRecords, more: PrunedRecords): void {
  total.rows += more.rows;
  total.groups += more.groups;
  total.batches += more.batches;
  total.attempts += more.attempts;
}
