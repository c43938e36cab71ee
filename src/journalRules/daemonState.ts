// Whether sending is paused and why (daemon_state's one row, the account's on a shared journal),
// on either journal. A change between paused and not is a webhook event (sending.paused,
// sending.resumed), written in the same transaction; a new reason while paused is none (one
// outage: one pair). The row is locked before it is read (Dialect's lockRows), so that two
// writers changing it at once write one pair of events, not two.
import type { DaemonStateUpdate } from '../ports/records.js';
import { recordEvent } from './events.js';
import { get, type Rule, run } from './rule.js';

function* writePause(update: DaemonStateUpdate, now: string): Rule<void> {
  yield* run(
    `INSERT INTO daemon_state (id, pid, paused, paused_code, paused_since, updated_at)
     VALUES (1, ?, ?, ?, ?, ?)
     ON CONFLICT (id) DO UPDATE SET
       pid = excluded.pid,
       paused = excluded.paused,
       paused_code = excluded.paused_code,
       paused_since = CASE WHEN excluded.paused IS NULL THEN NULL ELSE coalesce(daemon_state.paused_since, excluded.paused_since) END,
       updated_at = excluded.updated_at`,
    update.pid ?? process.pid,
    update.paused,
    update.paused === null ? null : (update.code ?? null),
    update.paused === null ? null : now,
    now,
  );
}

/**
 * Writes the pause (see the top); with webhook receivers (`targets`), in the caller's transaction,
 * the event of a change. `lockRows`: SQL after a SELECT that locks its rows ('' for a lone writer).
 */
export function* setPause(
  targets: readonly string[],
  update: DaemonStateUpdate,
  now: string,
  lockRows: string,
): Rule<void> {
  if (targets.length === 0) return yield* writePause(update, now);
  yield* run(
    "INSERT INTO daemon_state (id, updated_at) VALUES (1, '') ON CONFLICT (id) DO NOTHING",
  );
  const before = yield* get<{ paused: string | null }>(
    `SELECT paused FROM daemon_state WHERE id = 1${lockRows}`,
  );
  yield* writePause(update, now);
  if (update.paused !== null && before?.paused == null)
    yield* recordEvent(targets, 'sending.paused', null, update.paused, now);
  else if (update.paused === null && before?.paused != null)
    yield* recordEvent(targets, 'sending.resumed', null, undefined, now);
}
