// The daemon's own state in the journal (one row, table daemon_state of migrations 2 and 6):
// whether sending is paused and why, and what requests wait for while it is not (a message
// window used up), so that `smsdrop status`, which only reads the journal, can say so.
// The daemon writes it; nothing else does.
import { insideOf, type Journal } from './connection.js';
import { nowIso, sql, sqlPluck } from './sql.js';
import { recordEvent } from './outbox.js';
import type { DaemonState, DaemonStateUpdate } from '../ports/records.js';

/**
 * A change between paused and not is a webhook event (sending.paused, sending.resumed), written in
 * the same transaction; a new reason while paused is none (one outage: one pair).
 */
export function setDaemonState(db: Journal, update: DaemonStateUpdate): void {
  if (insideOf(db).webhookTargets.length === 0) {
    writeDaemonState(db, update);
    return;
  }
  insideOf(db).transaction(() => {
    const before = sqlPluck(db, 'SELECT paused FROM daemon_state WHERE id = 1').get() as
      string | null | undefined;
    writeDaemonState(db, update);
    if (update.paused !== null && typeof before !== 'string')
      recordEvent(db, 'sending.paused', null, update.paused);
    else if (update.paused === null && typeof before === 'string')
      recordEvent(db, 'sending.resumed', null);
  })();
}

function writeDaemonState(db: Journal, update: DaemonStateUpdate): void {
  const now = nowIso();
  sql(
    db,
    `INSERT INTO daemon_state (id, pid, paused, paused_code, paused_since, updated_at)
     VALUES (1, ?, ?, ?, ?, ?)
     ON CONFLICT (id) DO UPDATE SET
       pid = excluded.pid,
       paused = excluded.paused,
       paused_code = excluded.paused_code,
       paused_since = CASE WHEN excluded.paused IS NULL THEN NULL ELSE coalesce(daemon_state.paused_since, excluded.paused_since) END,
       updated_at = excluded.updated_at`,
  ).run(
    update.pid ?? process.pid,
    update.paused,
    update.paused === null ? null : (update.code ?? null),
    update.paused === null ? null : now,
    now,
  );
}

/**
 * What requests wait for (null: nothing), kept apart from the pause: each is set and cleared by its
 * own events.
 */
export function setDaemonWaiting(
  db: Journal,
  waiting: string | null,
  pid: number = process.pid,
): void {
  const now = nowIso();
  sql(
    db,
    `INSERT INTO daemon_state (id, pid, waiting, updated_at) VALUES (1, ?, ?, ?)
     ON CONFLICT (id) DO UPDATE SET pid = excluded.pid, waiting = excluded.waiting, updated_at = excluded.updated_at`,
  ).run(pid, waiting, now);
}

export function getDaemonState(db: Journal): DaemonState | undefined {
  return sql(
    db,
    'SELECT pid, paused, paused_code, paused_since, waiting, updated_at FROM daemon_state WHERE id = 1',
  ).get() as DaemonState | undefined;
}
