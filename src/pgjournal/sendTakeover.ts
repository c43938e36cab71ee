// Batches left `sending` with no node to finish them: their attempt was written, their request
// may have left, and no outcome came. SQLite finds them at start-up (src/journal/sendMoves.ts,
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
import type pg from 'pg';
import { recoverInterrupted } from '../journalRules/recovery.js';
import { countBy, type Queryable } from './claims.js';
import { RELEASING, runRule } from './rules.js';
import { withTransaction } from './smallTransaction.js';

/** SQL: the file's abandoned batches. $1 file, $2 node, $3 batches in flight here. */
const ABANDONED_WHERE = `file_id = $1 AND state = 'sending'
  AND (lease_node IS NULL OR lease_until <= clock_timestamp()
    OR (lease_node = $2 AND NOT (id = ANY($3::bigint[]))))`;

/**
 * The abandoned batches, locked until the transaction ends (SKIP LOCKED: one that a node is
 * recording right now is not abandoned).
 */
const ABANDONED = `SELECT id, CASE WHEN lease_node <> $2 THEN lease_node END AS taken_from
  FROM batches WHERE ${ABANDONED_WHERE} ORDER BY id FOR UPDATE SKIP LOCKED`;

export interface TakenOver {
  /** The batches put back or ended unknown. */
  ids: number[];
  /** How many of them another node held (its lease passed), by node. */
  takenFrom: Map<string, number>;
}

/**
 * Puts the file's abandoned `sending` batches back (reqId on) or ends them unknown, as the journal
 * rules recover any interrupted batch, their lease gone; returns their ids, and the nodes whose
 * they were. `inFlight`: this node's requests whose outcome is not recorded yet.
 */
export function takeOverAbandoned(
  pool: pg.Pool,
  fileId: number,
  node: string,
  inFlight: Iterable<number>,
  reqIdOn: boolean,
): Promise<TakenOver> {
  return withTransaction(pool, async (client) => {
    const { rows } = await client.query<{ id: number; taken_from: string | null }>(ABANDONED, [
      fileId,
      node,
      [...inFlight],
    ]);
    const ids = rows.map((r) => r.id);
    const now = new Date().toISOString();
    if (ids.length > 0) await runRule(client, recoverInterrupted(RELEASING, ids, reqIdOn, now));
    return { ids, takenFrom: countBy(rows) };
  });
}

/** Whether the file has a batch takeOverAbandoned would take now (a cheap read before it). */
export async function anyAbandoned(
  db: Queryable,
  fileId: number,
  node: string,
  inFlight: Iterable<number>,
): Promise<boolean> {
  const { rows } = await db.query<{ any: boolean }>(
    `SELECT EXISTS (SELECT 1 FROM batches WHERE ${ABANDONED_WHERE}) AS any`,
    [fileId, node, [...inFlight]],
  );
  return rows[0]!.any;
}
