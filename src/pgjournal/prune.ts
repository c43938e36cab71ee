// Keeping the PostgreSQL journal small (as journal/prune.ts in SQLite): a file that ended (done or
// refused) before the cut-off loses its rows, groups, batches and attempts, with every number and
// value in them; its files row stays with its counts stored on it, so reports list it and the same
// bytes dropped again are still recognised. The same rules decide which files go: none being
// processed now (by this node), none holding a batch that may still go.
//
// Each step is a statement of its own (a transaction for the mark), so requests of every node wait
// for at most one step. The space is given back by PostgreSQL's autovacuum, not by smsdrop; its
// size is pg_total_relation_size of the journal's tables. A backup is the server's business
// (pg_dump, point-in-time recovery): `smsdrop backup` refuses.
import { FILE_MAY_STILL_GO } from '../journalRules/files.js';
import type pg from 'pg';
import { SmsdropError } from '../errors.js';
import type { BusyFiles, Maintenance } from '../ports/maintenance.js';
import type {
  FileToPrune,
  JournalSize,
  PrunedRecords,
  PruneOptions,
  PruneResult,
} from '../ports/records.js';
import { FILE_STATUS, SETTLED_AS, SETTLED_STATES, sqlList } from '../ports/states.js';
import { withTransaction } from './smallTransaction.js';
import { batchCode } from '../journalRules/statusCodes.js';

/** Records deleted per step, as in SQLite. */
const PRUNE_STEP_RECORDS = 2_000;

const MAY_STILL_GO = FILE_MAY_STILL_GO;

const FILES_TO_PRUNE = `SELECT f.id, f.name, f.sha256, f.status, f.finished_at FROM files f
  WHERE f.pruned_at IS NULL AND f.finished_at < $1 AND f.status IN ${sqlList([FILE_STATUS.done, FILE_STATUS.refused])}
    AND NOT ${MAY_STILL_GO}
  ORDER BY f.finished_at COLLATE "C", f.id`;

const RECORDS_OF = `SELECT (SELECT count(*) FROM rows WHERE file_id = $1) AS rows,
    (SELECT count(*) FROM groups WHERE file_id = $1) AS groups,
    (SELECT count(*) FROM batches WHERE file_id = $1) AS batches,
    (SELECT count(*) FROM batches b JOIN attempts a ON a.batch_id = b.id WHERE b.file_id = $1) AS attempts`;

const MARK_PRUNED = `UPDATE files SET (kept_accepted, kept_failed, kept_unknown, kept_pending, kept_requests, kept_cancelled) =
    (SELECT accepted, failed, unknown, pending, requests, cancelled FROM v_files WHERE id = $1),
  (kept_first_send, kept_last_send) =
    (SELECT min(a.started_at), max(a.finished_at) FROM batches b JOIN attempts a ON a.batch_id = b.id WHERE b.file_id = $1),
  pruned_at = $2
  WHERE id = $1 AND pruned_at IS NULL`;

/** What the file sent goes to pruned_totals, so that /metrics' counters never go down. */
const KEEP_TOTALS = `INSERT INTO pruned_totals (kind, outcome, code, count)
  SELECT kind, outcome, code, sum(n) FROM (
    SELECT 'numbers' AS kind, ${SETTLED_AS} AS outcome, coalesce(${batchCode('batches')}, '') AS code, numbers AS n
      FROM batches WHERE file_id = $1 AND state IN ${sqlList(SETTLED_STATES)}
    UNION ALL
    SELECT 'requests', a.outcome, '', 1 FROM batches b JOIN attempts a ON a.batch_id = b.id
      WHERE b.file_id = $1 AND a.outcome IS NOT NULL
  ) t GROUP BY kind, outcome, code
  ON CONFLICT (kind, outcome, code) DO UPDATE SET count = pruned_totals.count + excluded.count`;

/**
 * The deletes of a pruned file's records, children first, each up to $2 records. Batches go in
 * descending ids: a batch made from another (a split half, a retry) has a higher id than its
 * parent, so no step deletes a parent whose child is still there.
 */
const DELETES = [
  'DELETE FROM attempts WHERE id IN (SELECT a.id FROM batches b JOIN attempts a ON a.batch_id = b.id WHERE b.file_id = $1 LIMIT $2)',
  'DELETE FROM batch_numbers WHERE batch_id IN (SELECT n.batch_id FROM batches b JOIN batch_numbers n ON n.batch_id = b.id WHERE b.file_id = $1 LIMIT $2)',
  'DELETE FROM rows WHERE id IN (SELECT id FROM rows WHERE file_id = $1 LIMIT $2)',
  'DELETE FROM invalid_cells WHERE row_id IN (SELECT row_id FROM invalid_cells WHERE file_id = $1 LIMIT $2)',
  'DELETE FROM batches WHERE id IN (SELECT id FROM batches WHERE file_id = $1 ORDER BY id DESC LIMIT $2)',
  'DELETE FROM groups WHERE id IN (SELECT id FROM groups WHERE file_id = $1 LIMIT $2)',
];

const SIZE = `SELECT coalesce(sum(pg_total_relation_size(c.oid)), 0) AS bytes
  FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
  WHERE n.nspname = current_schema() AND c.relkind = 'r'`;

async function size(pool: pg.Pool): Promise<JournalSize> {
  const { rows } = await pool.query<{ bytes: number }>(SIZE);
  const bytes = rows[0]?.bytes ?? 0;
  // No WAL or intents file of smsdrop's own; free space inside the tables is autovacuum's.
  return { bytes, database: bytes, wal: 0, intents: 0, free: 0 };
}

async function recordsOf(pool: pg.Pool, fileId: number): Promise<PrunedRecords> {
  return (await pool.query<PrunedRecords>(RECORDS_OF, [fileId])).rows[0]!;
}

/** Stores the file's counts on its row and marks it pruned, in one transaction. */
async function markPruned(pool: pg.Pool, fileId: number): Promise<boolean> {
  return withTransaction(pool, async (client) => {
    const marked =
      (await client.query(MARK_PRUNED, [fileId, new Date().toISOString()])).rowCount === 1;
    if (marked) await client.query(KEEP_TOTALS, [fileId]);
    return marked;
  });
}

/** Deletes up to a step of the pruned file's records; how many (0: none is left). */
async function deleteStep(pool: pg.Pool, fileId: number): Promise<number> {
  for (const text of DELETES) {
    const changes = (await pool.query(text, [fileId, PRUNE_STEP_RECORDS])).rowCount ?? 0;
    if (changes > 0) return changes;
  }
  return 0;
}

async function forgetSuppressed(pool: pg.Pool, before: string, dryRun: boolean): Promise<number> {
  if (dryRun)
    return (
      await pool.query<{ n: number }>('SELECT count(*) AS n FROM suppressed WHERE added_at < $1', [
        before,
      ])
    ).rows[0]!.n;
  return (await pool.query('DELETE FROM suppressed WHERE added_at < $1', [before])).rowCount ?? 0;
}

async function prune(
  pool: pg.Pool,
  inProgress: BusyFiles,
  options: PruneOptions,
): Promise<PruneResult> {
  const candidates = (await pool.query<FileToPrune>(FILES_TO_PRUNE, [options.endedBefore])).rows;
  const files = candidates.filter((f) => !inProgress.has(f.id));
  const records: PrunedRecords = { rows: 0, groups: 0, batches: 0, attempts: 0 };
  for (const f of files) addRecords(records, await recordsOf(pool, f.id));
  const bytesBefore = (await size(pool)).bytes;
  const result = { files, records, suppressed: 0, bytesBefore, bytesAfter: bytesBefore };
  const forget = (dryRun: boolean) =>
    options.suppressed ? forgetSuppressed(pool, options.endedBefore, dryRun) : 0;
  if (options.dryRun) return { ...result, suppressed: await forget(true), checkpointed: false };
  const step = async <T>(what: 'mark' | 'delete' | 'suppressed', write: () => Promise<T>) => {
    const started = performance.now();
    const value = await write();
    const ms = performance.now() - started;
    options.onStep?.(what, ms, ms);
    return value;
  };
  const pruned: FileToPrune[] = [];
  for (const f of files) {
    if (options.signal?.aborted) break;
    if (inProgress.has(f.id) || !(await step('mark', () => markPruned(pool, f.id)))) continue;
    pruned.push(f);
    while (!options.signal?.aborted && (await step('delete', () => deleteStep(pool, f.id))) > 0);
  }
  const suppressed = await step('suppressed', async () => forget(false));
  const bytesAfter = (await size(pool)).bytes;
  // No WAL of smsdrop's to empty: the server's own is PostgreSQL's business.
  return { ...result, files: pruned, suppressed, bytesAfter, checkpointed: true };
}

function addRecords(total: PrunedRecords, more: PrunedRecords): void {
  total.rows += more.rows;
  total.groups += more.groups;
  total.batches += more.batches;
  total.attempts += more.attempts;
}

/** `dryRun`: a reader's, which only says what it would delete. */
export function pgMaintenance(pool: pg.Pool, dryRun = false): Maintenance {
  return {
    // `busy`: the files this node processes now, asked again before each file is marked.
    prune: (options, busy) => prune(pool, busy, dryRun ? { ...options, dryRun: true } : options),
    backup: () =>
      Promise.reject(
        new SmsdropError(
          'E_BACKUP_POSTGRES',
          'smsdrop backup copies the SQLite journal; this one is in PostgreSQL (SMSDROP_DATABASE_URL): back it up with pg_dump, or the server’s point-in-time recovery',
        ),
      ),
    size: () => size(pool),
  };
}
