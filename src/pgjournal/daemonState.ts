// The daemon's state in PostgreSQL (as journal/daemonState.ts in SQLite): whether sending is paused
// and why, and what requests wait for, so that `smsdrop status` can say so. The pause is the
// account's, not one node's: daemon_state's one row, which the nodes share. What belongs to one
// daemon's process (its pid, what its requests wait for) is its node's row of node_state, so that
// nodes do not write over each other's; status finds the row of the process holding its data
// directory (statusReads.ts, daemonState).
import os from 'node:os';
import type pg from 'pg';
import type { DaemonStateStore } from '../ports/daemonState.js';
import type { DaemonState, DaemonStateUpdate } from '../ports/records.js';
import { setPause } from '../journalRules/daemonState.js';
import type { WebhookTargets } from './outbox.js';
import { runRule } from './rules.js';
import { type Queryable, withTransaction } from './smallTransaction.js';

/** Whether sending is paused and why (src/journalRules/daemonState.ts): the account's row. */
function setPauseOf(
  pool: pg.Pool,
  targets: WebhookTargets,
  update: DaemonStateUpdate,
): Promise<void> {
  const write = (db: Queryable) =>
    runRule(db, setPause(targets.ids, update, new Date().toISOString(), ' FOR UPDATE'));
  return targets.ids.length === 0 ? write(pool) : withTransaction(pool, write);
}

/** The node's own row: its process (and what it waits for, when `waiting` is given). */
async function writeNode(
  db: Queryable,
  node: string,
  pid: number,
  waiting?: string | null,
): Promise<void> {
  await db.query(
    `INSERT INTO node_state (node, host, pid, waiting, updated_at) VALUES ($1, $2, $3, $4, $5)
     ON CONFLICT (node) DO UPDATE SET host = excluded.host, pid = excluded.pid,
       waiting = CASE WHEN $6 THEN excluded.waiting ELSE node_state.waiting END,
       updated_at = excluded.updated_at`,
    [node, os.hostname(), pid, waiting ?? null, new Date().toISOString(), waiting !== undefined],
  );
}

/** The daemon state of node `node` (SMSDROP_NODE_ID) on the journal of `pool`. */
export function pgDaemonState(
  pool: pg.Pool,
  targets: WebhookTargets,
  node: string,
): DaemonStateStore {
  return {
    setPause: async (update) => {
      await setPauseOf(pool, targets, update);
      await writeNode(pool, node, update.pid ?? process.pid);
    },
    setWaiting: (waiting, pid = process.pid) => writeNode(pool, node, pid, waiting),
  };
}

/**
 * The state of the daemon whose process is `pid` on this host: its node's own row with the
 * account's pause. Without a pid, this host's latest node row, as SQLite's one daemon's record;
 * when no node wrote one (a journal copied from SQLite), daemon_state's row alone.
 */
export async function daemonStateOf(db: Queryable, pid?: number): Promise<DaemonState | undefined> {
  const { rows } = await db.query<DaemonState>(
    `SELECT coalesce(n.pid, d.pid) AS pid, d.paused, d.paused_code, d.paused_since,
       CASE WHEN n.node IS NULL THEN d.waiting ELSE n.waiting END AS waiting,
       CASE WHEN d.updated_at IS NULL OR n.updated_at > d.updated_at THEN n.updated_at
            ELSE d.updated_at END AS updated_at
     FROM (SELECT 1) AS one
     LEFT JOIN daemon_state d ON d.id = 1
     LEFT JOIN LATERAL (SELECT * FROM node_state WHERE host = $1 AND ($2::integer IS NULL OR pid = $2)
                        ORDER BY updated_at DESC LIMIT 1) n ON true
     WHERE d.id IS NOT NULL OR n.node IS NOT NULL`,
    [os.hostname(), pid ?? null],
  );
  return rows[0];
}
