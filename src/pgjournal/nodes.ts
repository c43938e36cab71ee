// The nodes sharing one PostgreSQL journal: each daemon's id, when it started, when it last
// renewed its leases (claims.ts, renewLeases marks it seen), and how many batches it holds: what
// `status`, the dashboard and /metrics show of a cluster.
import os from 'node:os';
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

export interface NodeRecord {
  id: string;
  /** ISO-8601, by the database's clock. */
  startedAt: string;
  lastSeen: string;
  /** Batches whose lease it holds and has not passed. */
  batchesHeld: number;
}

/** Every node that ever used the journal, the most recently seen first. */
export async function listNodes(db: Queryable): Promise<NodeRecord[]> {
  const { rows } = await db.query<{
    id: string;
    started_at: Date;
    last_seen: Date;
    held: number;
  }>(
    `SELECT n.id, n.started_at, n.last_seen,
       (SELECT count(*) FROM batches b WHERE b.lease_node = n.id AND b.lease_until > clock_timestamp())::int AS held
     FROM nodes n ORDER BY n.last_seen DESC, n.id`,
  );
  return rows.map((r) => ({
    id: r.id,
    startedAt: r.started_at.toISOString(),
    lastSeen: r.last_seen.toISOString(),
    batchesHeld: r.held,
  }));
}
