// Several daemons sending one journal's batches: a node claims due batches under a
// lease, a node id and an expiry by the database's clock (the one clock all nodes share), renewed
// while it lives; a batch whose lease passed may be claimed by another node.
//
// A claim is one statement: the due batches are picked `FOR UPDATE SKIP LOCKED`, so two nodes
// claiming at once never wait for each other and never pick the same batch (each skips the rows
// the other has locked), and the same statement writes the lease. A batch leased to another node
// is not due for this one until the lease passes; a node may claim its own leased batches again
// (they are in its `skip` while it still holds them in memory, as with SQLite).
//
// A claim changes no state, as SQLite's claim (ports/send.ts): startAttempts remains the claim
// that counts, and in this journal must also find the lease still held (LEASE_HELD) before an
// attempt is written. A node that cannot renew must stop sending before `heldUntil`, measured on
// its own monotonic clock from before the statement left, which the database's expiry cannot
// precede.
import { performance } from 'node:perf_hooks';
import type pg from 'pg';
import type { BatchRecord, BatchToSend, DueQuery } from '../ports/index.js';
import { type DueRow, toBatchToSend } from '../ports/dueRow.js';

/** A pool or one of its clients (inside a transaction). */
export type Queryable = Pick<pg.Pool, 'query'> | Pick<pg.PoolClient, 'query'>;

export interface Lease {
  /** The node's id (host and pid by default). */
  node: string;
  /** How long a claim or a renewal lasts (SMSDROP_LEASE). */
  ms: number;
}

export interface Claimed {
  first: BatchToSend[];
  due: BatchToSend[];
  /** Batches claimed whose lease another node held and let pass: how many, by that node. */
  takenFrom: Map<string, number>;
  /** performance.now() before which the claimed leases cannot have passed. */
  heldUntil: number;
}

/** SQL: the batch's lease is this node's ($node) and has not passed. For startAttempts' guard. */
export function leaseHeld(nodeParam: string): string {
  return `lease_node = ${nodeParam} AND lease_until > clock_timestamp()`;
}

/** SQL assignment that gives a lease up, the batch unchanged (a node stopping, say). */
const LEASE_GIVEN_UP = 'lease_node = NULL, lease_until = NULL';

/**
 * SQL assignment written with a batch's outcome: the lease given up, and the batch no longer one
 * to send first (as SQLite's, handed out once: then it is any other batch).
 */
export const LEASE_RELEASED = `${LEASE_GIVEN_UP}, send_first = false`;

const BATCH_COLUMNS = [
  'id',
  'file_id',
  'group_id',
  'parent_id',
  'req_id',
  'numbers',
  'state',
  'attempts',
  'deferrals',
  'maybe_sent',
  'first_doubt_at',
  'next_attempt_at',
  'status_code',
  'status_msg',
] as const satisfies readonly (keyof BatchRecord)[];

// Batches intake asked to go first (send_first, set in its transaction) come before the others,
// whatever afterId, as SQLite's dueFirst: for every node, and after a restart.
const CLAIM = `
  WITH due AS (
    SELECT b.id, b.send_first, CASE WHEN b.lease_node <> $5 THEN b.lease_node END AS taken_from
    FROM batches b
    WHERE b.file_id = $1 AND b.state = 'planned' AND b.next_attempt_at <= $2
      AND (b.id > $3 OR b.send_first)
      AND NOT (b.id = ANY($4::bigint[]))
      AND (b.lease_node IS NULL OR b.lease_node = $5 OR b.lease_until <= clock_timestamp())
    ORDER BY b.send_first DESC, b.id
    LIMIT $6
    FOR UPDATE OF b SKIP LOCKED
  )
  UPDATE batches b SET lease_node = $5, lease_until = clock_timestamp() + $7::integer * interval '1 millisecond'
  FROM due, groups g, batch_numbers n
  WHERE b.id = due.id AND g.id = b.group_id AND n.batch_id = b.id
  RETURNING ${BATCH_COLUMNS.map((c) => `b.${c}`).join(', ')}, due.send_first AS first,
    due.taken_from, g.app_id AS g_app_id, g.template_id AS g_template_id, g.datas AS g_datas, n.phones AS g_phones`;

/**
 * Claims up to `limit` due planned batches of the file for `lease.node`: those intake asked to
 * send first (send_first), then the others after `afterId` in id order; none of `skip`, none
 * another node holds.
 */
export async function claimDueBatches(db: Queryable, lease: Lease, q: DueQuery): Promise<Claimed> {
  const heldUntil = performance.now() + lease.ms;
  const { rows } = await db.query<DueRow & { first: boolean; taken_from: string | null }>(CLAIM, [
    q.fileId,
    q.now,
    q.afterId,
    [...q.skip],
    lease.node,
    q.limit,
    lease.ms,
  ]);
  rows.sort((a, b) => a.id - b.id);
  const batches = (first: boolean) =>
    rows
      .filter((r) => r.first === first)
      .map(({ first: _first, taken_from: _from, ...row }) => toBatchToSend(row));
  return { first: batches(true), due: batches(false), heldUntil, takenFrom: countBy(rows) };
}

/** How many of the rows each node other than this one held (`taken_from`), by node. */
export function countBy(rows: ReadonlyArray<{ taken_from: string | null }>): Map<string, number> {
  const counts = new Map<string, number>();
  for (const { taken_from: node } of rows)
    if (node !== null) counts.set(node, (counts.get(node) ?? 0) + 1);
  return counts;
}

// A batch another transaction has locked (this node's own turn writing its attempt or outcome,
// its intake) is skipped, not waited for: a renewal that waited could close a cycle of row locks
// with that transaction (40P01, a deadlock). Skipped, its lease is still
// this node's (live), renewed at the next renewal.
/** SQL: one of the batches the node still keeps ($3; null: all it holds). */
const KEPT = '($3::bigint[] IS NULL OR id = ANY($3::bigint[]))';

const RENEW = `
  WITH seen AS (
    INSERT INTO nodes (id) VALUES ($1)
    ON CONFLICT (id) DO UPDATE SET last_seen = clock_timestamp()
  ),
  live AS (SELECT id FROM batches WHERE ${leaseHeld('$1')} AND ${KEPT}),
  renewed AS (
    UPDATE batches SET lease_until = clock_timestamp() + $2::integer * interval '1 millisecond'
    WHERE id IN (SELECT id FROM batches WHERE ${leaseHeld('$1')} AND ${KEPT}
                 ORDER BY id FOR UPDATE SKIP LOCKED)
    RETURNING id
  ),
  reading AS (
    UPDATE file_readers SET until = clock_timestamp() + $2::integer * interval '1 millisecond'
    WHERE file_id IN (SELECT file_id FROM file_readers WHERE node = $1 AND until > clock_timestamp()
                      ORDER BY file_id FOR UPDATE SKIP LOCKED)
  )
  SELECT live.id, renewed.id IS NOT NULL AS renewed FROM live LEFT JOIN renewed USING (id)`;

/**
 * Extends the node's leases that have not passed, and marks the node seen. A lease that passed is
 * not renewed: another node may have taken the batch, so this node must drop it (`held` lacks it).
 * `busy`: leases still the node's, not renewed this time (their batch was locked by a write).
 * `keep`: only these batches' leases (those the node still means to send; the others lapse), or
 * every lease of the node.
 */
export async function renewLeases(
  db: Queryable,
  lease: Lease,
  keep?: readonly number[],
): Promise<{ held: number[]; busy: number[]; heldUntil: number }> {
  const heldUntil = performance.now() + lease.ms;
  const { rows } = await db.query<{ id: number; renewed: boolean }>(RENEW, [
    lease.node,
    lease.ms,
    keep ?? null,
  ]);
  const ids = (renewed: boolean) =>
    rows
      .filter((r) => r.renewed === renewed)
      .map((r) => r.id)
      .sort((a, b) => a - b);
  return { held: ids(true), busy: ids(false), heldUntil };
}

/**
 * Gives up the node's leases of these batches (all of them without `batchIds`: a node stopping
 * cleanly), so that another node need not wait for them to pass. Returns the ids released.
 */
export async function releaseLeases(
  db: Queryable,
  node: string,
  batchIds?: readonly number[],
): Promise<number[]> {
  const { rows } = await db.query<{ id: number }>(
    `UPDATE batches SET ${LEASE_GIVEN_UP} WHERE lease_node = $1 AND ($2::bigint[] IS NULL OR id = ANY($2::bigint[])) RETURNING id`,
    [node, batchIds ?? null],
  );
  return rows.map((r) => r.id).sort((a, b) => a - b);
}

/**
 * Gives up the node's leases of these batches that are still planned (claimed, never started);
 * one a write of this node's has locked is left to lapse. Returns the ids released.
 */
export async function releasePlannedLeases(
  db: Queryable,
  node: string,
  batchIds: readonly number[],
): Promise<number[]> {
  const { rows } = await db.query<{ id: number }>(
    `UPDATE batches SET ${LEASE_GIVEN_UP}
     WHERE id IN (SELECT id FROM batches WHERE lease_node = $1 AND id = ANY($2::bigint[])
                  AND state = 'planned' ORDER BY id FOR UPDATE SKIP LOCKED)
     RETURNING id`,
    [node, batchIds],
  );
  return rows.map((r) => r.id).sort((a, b) => a - b);
}

/**
 * Gives up every lease of the node but those of `keep` (a clean stop: requests still in flight
 * keep theirs until their outcome). Returns the ids released.
 */
export async function releaseLeasesExcept(
  db: Queryable,
  node: string,
  keep: readonly number[],
): Promise<number[]> {
  const { rows } = await db.query<{ id: number }>(
    `UPDATE batches SET ${LEASE_GIVEN_UP} WHERE lease_node = $1 AND NOT (id = ANY($2::bigint[])) RETURNING id`,
    [node, keep],
  );
  return rows.map((r) => r.id).sort((a, b) => a - b);
}
