// Figures of the daemon's /metrics, its dashboard and its progress line on the SQLite journal: the
// statements are the rules of src/journalRules/metricsReads.ts, run on this connection.
import type { Journal } from './connection.js';
import type { FileWaiting } from '../ports/reads.js';
import * as rules from '../journalRules/metricsReads.js';
import { runRule, SQLITE_DIALECT } from './rules.js';

/** Numbers still to send: of every file, or of the files with these hashes still sending. */
export function numbersToSend(db: Journal, sha256s?: readonly string[]): number {
  return runRule(db, rules.numbersToSend(SQLITE_DIALECT, sha256s));
}

/** Unfinished files held, scheduled or paused at `now` (ports/reads.ts filesWaiting). */
export function filesWaiting(
  db: Journal,
  now: string,
): Array<{ waiting: FileWaiting; files: number }> {
  return runRule(db, rules.filesWaiting(now));
}

/** Files of each status. */
export function filesByStatus(db: Journal): Array<{ status: string; files: number }> {
  return runRule(db, rules.filesByStatus(SQLITE_DIALECT));
}

/** Rows of every file by status. */
export function rowsByStatus(
  db: Journal,
): Record<'accepted' | 'failed' | 'unknown' | 'invalid' | 'duplicate' | 'pending', number> {
  return runRule(db, rules.rowsByStatus());
}

/** Numbers with an outcome since the journal began, by outcome and provider status code. */
export function numbersByOutcome(
  db: Journal,
): Array<{ outcome: string; code: string; numbers: number }> {
  return runRule(db, rules.numbersByOutcome(SQLITE_DIALECT));
}

/** Requests answered (or given up on) since the journal began, by outcome. */
export function requestsByOutcome(db: Journal): Array<{ outcome: string; requests: number }> {
  return runRule(db, rules.requestsByOutcome(SQLITE_DIALECT));
}

/** Per minute since `since` (ISO): requests answered and the numbers accepted by them. */
export function sendRateByMinute(
  db: Journal,
  since: string,
): Array<{ minute: string; requests: number; accepted: number }> {
  return runRule(db, rules.sendRateByMinute(SQLITE_DIALECT, since));
}
