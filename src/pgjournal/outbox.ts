// The webhook outbox in PostgreSQL (as journal/outbox.ts in SQLite): an event is written by the
// journal write it reports, in the same transaction (recordEvent takes the caller's client), so
// that a crash loses neither or both; the daemon posts them in order per receiver and marks each
// delivered. Nothing is written while no receiver is set (WebhookTargets).
import { recordEvent as eventRule } from '../journalRules/events.js';
import type pg from 'pg';
import type { OutboxStore } from '../ports/outbox.js';
import type { FileAside, OutboxRow, WebhookEvent } from '../ports/events.js';
import { runRule } from './rules.js';
import { type Queryable, withTransaction } from './smallTransaction.js';

/** The receivers events are written for (ids of their URLs), shared by every store of a handle. */
export interface WebhookTargets {
  /** Changed in place (setTargets): the FileStore holds the same array. */
  readonly ids: string[];
}

/**
 * Adds `event` to the outbox, once per receiver (src/journalRules/events.ts), in the caller's
 * transaction (`db` is its client).
 */
export function recordEvent(
  db: Queryable,
  targets: WebhookTargets,
  event: WebhookEvent,
  file: number | FileAside | null,
  reason?: string,
): Promise<void> {
  return runRule(db, eventRule(targets.ids, event, file, reason, new Date().toISOString()));
}

export function pgOutbox(
  pool: pg.Pool,
  targets: WebhookTargets,
  isOpen: () => boolean,
): OutboxStore {
  return {
    setTargets: (ids) => {
      targets.ids.splice(0, targets.ids.length, ...ids);
    },
    hasTargets: () => targets.ids.length > 0,
    recordEventNow: async (event, file, reason) => {
      if (targets.ids.length === 0) return;
      await withTransaction(pool, (client) => recordEvent(client, targets, event, file, reason));
    },
    undelivered: async (target, limit) =>
      (
        await pool.query<OutboxRow>(
          'SELECT id, event, body, created_at, attempts FROM webhook_outbox WHERE target = $1 AND delivered_at IS NULL ORDER BY id LIMIT $2',
          [target, limit],
        )
      ).rows,
    markDelivered: async (ids) => {
      await pool.query(
        'UPDATE webhook_outbox SET delivered_at = $1, attempts = attempts + 1, last_error = NULL WHERE id = ANY($2::bigint[])',
        [new Date().toISOString(), [...ids]],
      );
    },
    noteDeliveryFailed: async (id, error) => {
      await pool.query(
        'UPDATE webhook_outbox SET attempts = attempts + 1, last_error = $1 WHERE id = $2',
        [error.slice(0, 500), id],
      );
    },
    // Each write is a transaction of its own on a pooled connection: nothing to wait for.
    canDeliver: isOpen,
    isOpen,
  };
}
