// What a batch's attempts, and everyone's recent attempts, say: whether a batch may have reached
// the provider, and what a message window has used up (send/).
import type { Journal } from './connection.js';
import { sqlRaw } from './sql.js';
import { runRule, SQLITE_DIALECT } from './rules.js';
import * as rules from '../journalRules/attempts.js';
import { MAY_HAVE_ARRIVED } from '../journalRules/attempts.js';
import type { AttemptHistory } from '../ports/records.js';

/** What the batch's attempts say (journalRules/attempts.ts). */
export function attemptHistory(db: Journal, batchId: number, reqId: string): AttemptHistory {
  return runRule(db, rules.attemptHistory(SQLITE_DIALECT, batchId, reqId));
}

/**
 * Attempts started after `sinceMs` (ms since the epoch) that may have sent their numbers, each with
 * its batch's count: what a message window (send/rate.ts) has used up before this process began.
 * Left out: requests the provider cannot have sent (never written, or refused as a whole).
 */
export function recentStarts(db: Journal, sinceMs: number): { at: number; numbers: number }[] {
  const rows = sqlRaw(
    db,
    `SELECT ${SQLITE_DIALECT.timeText('a.started_at')}, b.numbers
     FROM attempts a INDEXED BY attempts_by_start JOIN batches b ON b.id = a.batch_id
     WHERE a.started_at > ${SQLITE_DIALECT.storedTime('?')}
       AND (outcome IN ('accepted', 'rejected:duplicate-request') OR ${MAY_HAVE_ARRIVED})`,
  ).all(new Date(sinceMs).toISOString()) as [string, number][];
  return rows.map(([startedAt, numbers]) => ({ at: Date.parse(startedAt), numbers }));
}
