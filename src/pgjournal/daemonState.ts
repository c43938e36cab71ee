// The daemon's state in PostgreSQL (as journal/daemonState.ts in SQLite): whether sending is paused
// and why, and what requests wait for, so that `smsdrop status` can say so. One row, as in SQLite:
// the nodes of a cluster share it (a pause is the account's, not one node's).
import type pg from 'pg';
import type { DaemonStateStore } from '../ports/daemonState.js';
import type { DaemonStateUpdate } from '../ports/records.js';
import { recordEvent, type WebhookTargets } from './outbox.js';
import { type Queryable, withTransaction } from './smallTransaction.js';

const WRITE_PAUSE = `
  INSERT INTO daemon_state (id, pid, paused, paused_code, paused_since, updated_at)
  VALUES (1, $1, $2, $3, $4, $5)
  ON CONFLICT (id) DO UPDATE SET
    pid = excluded.pid,
    paused = excluded.paused,
    paused_code = excluded.paused_code,
    paused_since = CASE WHEN excluded.paused IS NULL THEN NULL ELSE coalesce(daemon_state.paused_since, excluded.paused_since) END,
    updated_at = excluded.updated_at`;

async function writePause(db: Queryable, update: DaemonStateUpdate): Promise<void> {
  const now = new Date().toISOString();
  await db.query(WRITE_PAUSE, [
    update.pid ?? process.pid,
    update.paused,
    update.paused === null ? null : (update.code ?? null),
    update.paused === null ? null : now,
    now,
  ]);
}

/**
 * A change between paused and not is a webhook event (sending.paused, sending.resumed), written in
 * the same transaction; a new reason while paused is none. The row is locked first, so that two
 * nodes changing it at once write one pair of events, not two.
 */
async function setPause(
  pool: pg.Pool,
  targets: WebhookTargets,
  update: DaemonStateUpdate,
): Promise<void> {
  if (targets.ids.length === 0) return writePause(pool, update);
  await withTransaction(pool, async (client) => {
    await client.query(
      "INSERT INTO daemon_state (id, updated_at) VALUES (1, '') ON CONFLICT (id) DO NOTHING",
    );
    const { rows } = await client.query<{ paused: string | null }>(
      'SELECT paused FROM daemon_state WHERE id = 1 FOR UPDATE',
    );
    const before = rows[0]?.paused ?? null;
    await writePause(client, update);
    if (update.paused !== null && before === null)
      await recordEvent(client, targets, 'sending.paused', null, update.paused);
    else if (update.paused === null && before !== null)
      await recordEvent(client, targets, 'sending.resumed', null);
  });
}

export function pgDaemonState(pool: pg.Pool, targets: WebhookTargets): DaemonStateStore {
  return {
    setPause: (update) => setPause(pool, targets, update),
    setWaiting: async (waiting, pid = process.pid) => {
      await pool.query(
        `INSERT INTO daemon_state (id, pid, waiting, updated_at) VALUES (1, $1, $2, $3)
         ON CONFLICT (id) DO UPDATE SET pid = excluded.pid, waiting = excluded.waiting, updated_at = excluded.updated_at`,
        [pid, waiting, new Date().toISOString()],
      );
    },
  };
}
