// The nodes sharing one PostgreSQL journal: each daemon's id, when it started, when it last
// renewed its leases (claims.ts, renewLeases marks it seen), and how many batches it holds: what
// `status`, the dashboard and /metrics show of a cluster.
import os from 'node:os';
import type { NodeRecord } from '../ports/reads.js';
import type { Queryable } from './claims.js';

/** A node's id when SMSDROP_NODE_ID is not set: its host and process id. */
export function defaultNodeId(): string {
  return `${os.hostname()}:${process.pid}`;
}

/** Records the node as started now (again, for an id that ran before: SMSDROP_NODE_ID). */
export async function registerNode(db: Queryable, node: string): Promise<void> {
  await db.query(
    `INSERT INTO nodes (id) VALUES ($1)
     ON CONFLICT (id) DO UPDATE SET started_at = clock_timestamp(), last_seen = clock_timestamp()`,
    [node],
  );
}

/**
 * The nodes seen in the last `withinMs` or holding batches (every one that ever used the journal
 * without it), the most recently seen first. Each start with the default id (host:pid) is a new
 * node: the window keeps the list to the living and the lately dead.
 */
export async function listNodes(db: Queryable, withinMs?: number): Promise<NodeRecord[]> {
  const { rows } = await db.query<{
    id: string;
    started_at: Date;
    last_seen: Date;
    held: number;
  }>(
    `SELECT n.id, n.started_at, n.last_seen,
       (SELECT count(*) FROM batches b WHERE b.lease_node = n.id AND b.lease_until > clock_timestamp())::int AS held
     FROM nodes n
     WHERE $1::bigint IS NULL OR n.last_seen > clock_timestamp() - $1::bigint * interval '1 millisecond'
       OR EXISTS (SELECT 1 FROM batches b WHERE b.lease_node = n.id AND b.lease_until > clock_timestamp())
     ORDER BY n.last_seen DESC, n.id`,
    [withinMs ?? null],
  );
  return rows.map((r) => ({
    id: r.id,
    startedAt: r.started_at.toISOString(),
    lastSeen: r.last_seen.toISOString(),
    batchesHeld: r.held,
  }));
}
