// Batches left `sending` with no node to finish them: their attempt was written, their request
// may have left, and no outcome came. SQLite finds them at start-up (src/journal/batches.ts,
// recoverInterrupted); in a cluster a node also finds them while it sends, once their node's lease
// has passed (a dead or cut-off node), and so takes them over. Either way they go back to planned
// under the same reqId (the provider refuses a reqId it has seen that day: 160054, counted as
// accepted), or, with reqId off, end unknown and are never resent automatically.
//
// Which `sending` batches of a file are abandoned:
//   - their lease passed (by the database's clock), or nobody holds one (an SQLite journal copied
//     by `migrate --to`, a node that gave its leases up at a stop it did not finish);
//   - or they are this node's but not among the requests this process has in flight: a node
//     restarted under the same id (SMSDROP_NODE_ID) finds what its previous life left.
// A batch whose lease passed but whose node is alive is no longer that node's: its outcome is
// refused (sendMoves.ts), and it started its request only while the lease held (leases.ts).
import type { Queryable } from './claims.js';

const INTERRUPTED_REASON = 'the program stopped before the outcome was recorded';
const RETRIED_MSG = 'interrupted mid-request; retried with the same reqId';
const UNKNOWN_MSG =
  'interrupted mid-request: it may have been sent; not resent because reqId is off';

/**
 * One statement, so it needs no transaction: the abandoned batches are locked (SKIP LOCKED: one
 * that a node is recording right now is not abandoned), their open attempts closed as
 * interrupted, and the batches moved as SQLite's recoverInterrupted moves them, their lease gone.
 * $1 file, $2 node, $3 batches in flight here, $4 reqId on, $5 now (ISO).
 */
const TAKE_OVER = `
  WITH abandoned AS (
    SELECT id FROM batches
    WHERE file_id = $1 AND state = 'sending'
      AND (lease_node IS NULL OR lease_until <= clock_timestamp()
        OR (lease_node = $2 AND NOT (id = ANY($3::bigint[]))))
    FOR UPDATE SKIP LOCKED
  ), open_attempts AS (
    UPDATE attempts SET finished_at = $5, outcome = 'interrupted', reason = '${INTERRUPTED_REASON}'
    WHERE batch_id IN (SELECT id FROM abandoned) AND finished_at IS NULL
    RETURNING batch_id, started_at
  ), left_at AS (
    SELECT batch_id, min(started_at) AS at FROM open_attempts GROUP BY batch_id
  )
  UPDATE batches b SET
    state = CASE WHEN $4::boolean THEN 'planned' ELSE 'unknown' END,
    updated_at = $5,
    status_code = NULL,
    status_msg = CASE WHEN $4::boolean THEN '${RETRIED_MSG}' ELSE '${UNKNOWN_MSG}' END,
    next_attempt_at = CASE WHEN $4::boolean THEN 0 ELSE b.next_attempt_at END,
    maybe_sent = CASE WHEN $4::boolean THEN greatest(b.maybe_sent, 1) ELSE b.maybe_sent END,
    first_doubt_at = CASE WHEN $4::boolean THEN coalesce(b.first_doubt_at, l.at, $5) ELSE b.first_doubt_at END,
    lease_node = NULL, lease_until = NULL
  FROM abandoned a LEFT JOIN left_at l ON l.batch_id = a.id
  WHERE b.id = a.id
  RETURNING b.id`;

/**
 * Puts the file's abandoned `sending` batches back (reqId on) or ends them unknown; returns their
 * ids. `inFlight`: this node's requests whose outcome is not recorded yet.
 */
export async function takeOverAbandoned(
  db: Queryable,
  fileId: number,
  node: string,
  inFlight: Iterable<number>,
  reqIdOn: boolean,
): Promise<number[]> {
  const { rows } = await db.query<{ id: number }>(TAKE_OVER, [
    fileId,
    node,
    [...inFlight],
    reqIdOn,
    new Date().toISOString(),
  ]);
  return rows.map((r) => r.id).sort((a, b) => a - b);
}

/** Whether the file has a batch takeOverAbandoned would take now (a cheap read before it). */
export async function anyAbandoned(
  db: Queryable,
  fileId: number,
  node: string,
  inFlight: Iterable<number>,
): Promise<boolean> {
  const { rows } = await db.query<{ any: boolean }>(
    `SELECT EXISTS (SELECT 1 FROM batches WHERE file_id = $1 AND state = 'sending'
       AND (lease_node IS NULL OR lease_until <= clock_timestamp()
         OR (lease_node = $2 AND NOT (id = ANY($3::bigint[]))))) AS any`,
    [fileId, node, [...inFlight]],
  );
  return rows[0]!.any;
}
