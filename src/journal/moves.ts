// The one way a batch changes state on SQLite: the journal rule (src/journalRules/moves.ts) run on
// this connection.
import type { Journal } from './connection.js';
import { nowIso } from './sql.js';
import type { BatchState } from '../ports/states.js';
import type { Fragment } from '../journalRules/rule.js';
import { moveBatch as moveRule, type MoveOptions } from '../journalRules/moves.js';
import { runRule, SQLITE_DIALECT } from './rules.js';

export { IllegalTransitionError } from '../journalRules/moves.js';

/** One column set by a move, as SQL with its parameters: ['next_attempt_at = ?', 0]. */
export type Assignment = Fragment;

/** See src/journalRules/moves.ts, moveBatch. */
export function moveBatch(
  db: Journal,
  batchId: number,
  to: BatchState,
  assignments: readonly Assignment[] = [],
  options: Omit<MoveOptions, 'now' | 'guard' | 'dialect'> & { now?: string } = {},
): boolean {
  return runRule(
    db,
    moveRule(batchId, to, assignments, {
      ...options,
      now: options.now ?? nowIso(),
      dialect: SQLITE_DIALECT,
    }),
  );
}
