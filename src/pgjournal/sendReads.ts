// The sender's reads on the PostgreSQL journal: what SQLite's src/journal/sendReads.ts and
// reportReads.ts (nextDueAt) answer, in PostgreSQL's SQL, and when a file may next have work for a
// node of a cluster.
import type { AttemptHistory } from '../ports/records.js';
import type { Queryable } from './claims.js';
import * as rules from '../journalRules/attempts.js';
import { MAY_HAVE_ARRIVED } from '../journalRules/attempts.js';
import { PG_DIALECT, runRule } from './rules.js';

/** What the batch's attempts say (journalRules/attempts.ts). */
export function attemptHistory(
  db: Queryable,
  batchId: number,
  reqId: string,
): Promise<AttemptHistory> {
  return runRule(db, rules.attemptHistory(PG_DIALECT, batchId, reqId));
}

/**
 * As src/journal/sendReads.ts, recentStarts (every node's: a message window is the account's), in
 * the order SQLite gives them (its index on the start).
 */
export async function recentStarts(
  db: Queryable,
  sinceMs: number,
): Promise<{ at: number; numbers: number }[]> {
  const { rows } = await db.query<{ started_at: string; numbers: number }>(
    `SELECT a.started_at, b.numbers FROM attempts a JOIN batches b ON b.id = a.batch_id
     WHERE a.started_at > $1
       AND (outcome IN ('accepted', 'rejected:duplicate-request') OR ${MAY_HAVE_ARRIVED})
     ORDER BY a.started_at, a.id`,
    [new Date(sinceMs).toISOString()],
  );
  return rows.map((r) => ({ at: Date.parse(r.started_at), numbers: r.numbers }));
}

/** SQL: what is left of a batch's lease, in whole milliseconds by the database's clock. */
const LEASE_LEFT_MS = 'ceil(extract(epoch FROM lease_until - clock_timestamp()) * 1000)::bigint';

/**
 * When the file may next have work for this node (ms since the epoch), or null when it has no
 * planned or sending batch left. As SQLite's, a planned batch is due at next_attempt_at; in a
 * cluster, a batch another node holds is looked at again when its lease would pass (it may be
 * taken over then), counted from now by the database's clock so that nodes' clocks need not
 * agree, or after `lookAgainMs` if sooner (its node may well release it before: a retry). A
 * file whose batches are all another live node's is not finished: its node is sending them.
 * This node's own `sending` batches are due now: between passes over the file none is in
 * flight, so they are what a previous life under the same id left (sendTakeover.ts).
 */
export async function nextDueAt(
  db: Queryable,
  fileId: number,
  node: string,
  now: number,
  lookAgainMs: number,
): Promise<number | null> {
  const { rows } = await db.query<{ at: number | null }>(
    `SELECT min(CASE
         WHEN lease_node IS NULL OR lease_node = $2 OR lease_until <= clock_timestamp()
           THEN CASE WHEN state = 'planned' THEN next_attempt_at ELSE $3::bigint END
         ELSE greatest(CASE WHEN state = 'planned' THEN next_attempt_at ELSE 0 END,
           $3::bigint + least($4::bigint, ${LEASE_LEFT_MS}))
       END)::bigint AS at
     FROM batches WHERE file_id = $1 AND state IN ('planned', 'sending')`,
    [fileId, node, now, lookAgainMs],
  );
  return rows[0]?.at ?? null;
}

/**
 * Files read in whole with batches due now that no live node holds (planned), or that a node whose
 * lease passed left `sending` (claimDueBatches takes those over): work for any node. A file
 * still being read (intake) is its reader's alone: whether its batches may go before it is read
 * whole is the reader's to decide (sending while reading). A refused file's are not sent at all,
 * nor those of a file an operator holds (ports/control.ts): its reader takes it up again.
 */
export async function filesWithWork(db: Queryable, now: number, limit: number): Promise<number[]> {
  const { rows } = await db.query<{ file_id: number }>(
    `SELECT f.id AS file_id FROM files f
     WHERE f.status = 'sending' AND f.control IS NULL AND (f.start_at IS NULL OR f.start_at <= $3)
       AND EXISTS (
       SELECT 1 FROM batches b WHERE b.file_id = f.id
         AND ((b.state = 'planned' AND b.next_attempt_at <= $1) OR b.state = 'sending')
         AND (b.lease_node IS NULL OR b.lease_until <= clock_timestamp())
     )
     ORDER BY f.id LIMIT $2`,
    [now, limit, new Date(now).toISOString()],
  );
  return rows.map((r) => r.file_id);
}
