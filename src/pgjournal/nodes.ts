// The nodes sharing one PostgreSQL journal: each daemon's id, when it started, when it last
// renewed its leases (claims.ts, renewLeases marks it seen), and how many batches it holds: what
// `status`, the dashboard and /metrics show of a cluster.
import os from 'node:os';
import type { FileNodes, NodeRecord } from '../ports/reads.js';
import type { Queryable } from './claims.js';

/** A node's id when SMSDROP_NODE_ID is not set: its host and process id. */
export function defaultNodeId(): string {
  return `${os.hostname()}:${process.pid}`;
}

/**
 * A daemon (smsdrop run) is a node an operator runs, listed while it lives; a one-shot command
 * (send, retry, resume, prune) holds leases for its claims as a daemon does, but is not listed.
 */
export type NodeKind = 'daemon' | 'command';

/**
 * Records the node as started now (again, for an id that ran before: SMSDROP_NODE_ID), as `kind`
 * (none: as it was recorded, a daemon if it was not).
 */
export async function registerNode(db: Queryable, node: string, kind?: NodeKind): Promise<void> {
  await db.query(
    `INSERT INTO nodes (id, kind) VALUES ($1, coalesce($2, 'daemon'))
     ON CONFLICT (id) DO UPDATE SET started_at = clock_timestamp(), last_seen = clock_timestamp(),
       kind = coalesce($2, nodes.kind)`,
    [node, kind ?? null],
  );
}

/**
 * The daemons seen in the last `withinMs` or holding batches (every one that ever used the journal
 * without it), the most recently seen first. Each start with the default id (host:pid) is a new
 * node: the window keeps the list to the living and the lately dead. One-shot commands are not
 * listed: each would stay an hour as a node of its own.
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
     WHERE n.kind = 'daemon' AND ($1::bigint IS NULL OR n.last_seen > clock_timestamp() - $1::bigint * interval '1 millisecond'
       OR EXISTS (SELECT 1 FROM batches b WHERE b.lease_node = n.id AND b.lease_until > clock_timestamp()))
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

/** Each file's reader whose claim has not passed, and each node's live leases of its batches. */
export async function nodesOfFiles(
  db: Queryable,
  fileIds: readonly number[],
): Promise<FileNodes[]> {
  const [readers, held] = await Promise.all([
    db.query<{ file_id: number; node: string }>(
      `SELECT file_id, node FROM file_readers
       WHERE file_id = ANY($1::bigint[]) AND until > clock_timestamp()`,
      [fileIds],
    ),
    db.query<{ file_id: number; node: string; batches: number }>(
      `SELECT file_id, lease_node AS node, count(*)::int AS batches FROM batches
       WHERE file_id = ANY($1::bigint[]) AND lease_node IS NOT NULL AND lease_until > clock_timestamp()
       GROUP BY file_id, lease_node ORDER BY batches DESC, node`,
      [fileIds],
    ),
  ]);
  return fileIds.map((fileId) => ({
    fileId,
    reader: readers.rows.find((r) => Number(r.file_id) === fileId)?.node ?? null,
    held: held.rows
      .filter((r) => Number(r.file_id) === fileId)
      .map(({ node, batches }) => ({ node, batches })),
  }));
}
