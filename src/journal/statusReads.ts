// What `smsdrop status` asks of the SQLite journal: the rules of src/journalRules/statusReads.ts,
// run on this connection.
import type { Journal } from './connection.js';
import type { FileLine, HeldFile } from '../ports/records.js';
import * as rules from '../journalRules/statusReads.js';
import { runRule, SQLITE_DIALECT } from './rules.js';

/** Files still being read or sent. */
export function unfinishedFileLines(db: Journal): FileLine[] {
  return runRule(db, rules.unfinishedFileLines());
}

/** Requests answered (or ended) since `since` (ISO), and when the first of them started. */
export function requestsFinishedSince(
  db: Journal,
  since: string,
): { count: number; first: string | null } {
  return runRule(db, rules.requestsFinishedSince(SQLITE_DIALECT, since));
}

/** How often each of these status codes answered a request since `since` (ISO), commonest first. */
export function answersWithCodesSince(
  db: Journal,
  codes: readonly string[],
  since: string,
): Array<{ code: string; count: number }> {
  return runRule(db, rules.answersWithCodesSince(SQLITE_DIALECT, codes, since));
}

/** Numbers of the file whose batch got its outcome since `since` (ISO). */
export function numbersSettledSince(db: Journal, fileId: number, since: string): number {
  return runRule(db, rules.numbersSettledSince(SQLITE_DIALECT, fileId, since));
}

/** Requests of the file out now, and their numbers. */
export function inFlight(db: Journal, fileId: number): { requests: number; numbers: number } {
  return runRule(db, rules.inFlight(fileId));
}

/** The latest answered attempt of any file. */
export function lastAnswer(db: Journal): rules.LastAnswer | undefined {
  return runRule(db, rules.lastAnswer(SQLITE_DIALECT));
}

/** The oldest file whose rows are still in the journal (not pruned), or undefined when none is. */
export function oldestHeldFile(db: Journal): HeldFile | undefined {
  return runRule(db, rules.oldestHeldFile());
}

/** How many files were pruned: only their line is left (prune.ts). */
export function prunedFileCount(db: Journal): number {
  return runRule(db, rules.prunedFileCount());
}
