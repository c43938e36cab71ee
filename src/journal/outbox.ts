// The webhook outbox (migration 10): events the daemon posts to its webhook receivers. An event is
// written by the journal write it reports, in the same transaction (files.ts, daemonState.ts), so
// that a crash loses neither or both; the daemon (webhooks/deliver.ts) posts them in order per
// receiver and marks each delivered. Nothing is written while no receiver is set
// (JournalInside.webhookTargets).
import { recordEvent as eventRule } from '../journalRules/events.js';
import { runRule } from './rules.js';
import { insideOf, type Journal } from './connection.js';
import { nowIso, sql } from './sql.js';
import type { FileAside, OutboxRow, WebhookEvent } from '../ports/events.js';

/**
 * Adds `event` to the outbox, once per receiver (src/journalRules/events.ts); the caller's
 * transaction carries it.
 */
export function recordEvent(
  db: Journal,
  event: WebhookEvent,
  file: number | FileAside | null,
  reason?: string,
): void {
  runRule(db, eventRule(insideOf(db).webhookTargets, event, file, reason, nowIso()));
}

/**
 * recordEvent in a transaction of its own, for events whose news is no journal write (a file moved
 * to failed/).
 */
export function recordEventNow(
  db: Journal,
  event: WebhookEvent,
  file: number | FileAside | null,
  reason?: string,
): void {
  if (insideOf(db).webhookTargets.length === 0) return;
  insideOf(db).transaction(() => recordEvent(db, event, file, reason))();
}

/** The receiver's undelivered events, oldest first. */
export function undeliveredEvents(db: Journal, target: string, limit: number): OutboxRow[] {
  return sql(
    db,
    'SELECT id, event, body, created_at, attempts FROM webhook_outbox WHERE target = ? AND delivered_at IS NULL ORDER BY id LIMIT ?',
  ).all(target, limit) as OutboxRow[];
}

export function markDelivered(db: Journal, id: number): void {
  sql(
    db,
    'UPDATE webhook_outbox SET delivered_at = ?, attempts = attempts + 1, last_error = NULL WHERE id = ?',
  ).run(nowIso(), id);
}

export function noteDeliveryFailed(db: Journal, id: number, error: string): void {
  sql(db, 'UPDATE webhook_outbox SET attempts = attempts + 1, last_error = ? WHERE id = ?').run(
    error.slice(0, 500),
    id,
  );
}

/** Per receiver: events waiting, and when the oldest was written. */
export function outboxBacklog(
  db: Journal,
): Array<{ target: string; waiting: number; oldest: string }> {
  return sql(
    db,
    'SELECT target, count(*) AS waiting, min(created_at) AS oldest FROM webhook_outbox WHERE delivered_at IS NULL GROUP BY target',
  ).all() as Array<{
    target: string;
    waiting: number;
    oldest: string;
  }>;
}
