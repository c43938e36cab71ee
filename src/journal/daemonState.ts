// The daemon's own state in the journal (one row, table daemon_state of migrations 2 and 6):
// whether sending is paused and why, and what requests wait for while it is not (a message
// window used up), so that `smsdrop status`, which only reads the journal, can say so.
// The daemon writes it; nothing else does.
import { insideOf, type Journal } from './connection.js';
import { nowIso, sql } from './sql.js';
import { setPause } from '../journalRules/daemonState.js';
import { runRule } from './rules.js';
import type { DaemonState, DaemonStateUpdate } from '../ports/records.js';

/** Whether sending is paused and why (src/journalRules/daemonState.ts). */
export function setDaemonState(db: Journal, update: DaemonStateUpdate): void {
  const targets = insideOf(db).webhookTargets;
  const write = () => runRule(db, setPause(targets, update, nowIso(), ''));
  if (targets.length === 0) write();
  else insideOf(db).transaction(write)();
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
