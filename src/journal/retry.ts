// `smsdrop retry` on SQLite: the journal rules of src/journalRules/retry.ts (which say what a retry
// does and why) run on this connection, the preparation in one transaction.
import { attemptHistory } from './sendReads.js';
import { insideOf, type Journal } from './connection.js';
import { runRule, SQLITE_RULES } from './rules.js';
import { type RetryRunner, retryCountsOf, retryStoreOf } from '../journalRules/retry.js';
import type { RetryCounts, RetryStore } from '../ports/retry.js';

/** The retry's rules on this connection: the one writer needs no lock. */
function runnerOf(db: Journal): RetryRunner {
  const ctx = {
    ...SQLITE_RULES,
    attemptHistory: (batchId: number, reqId: string) => attemptHistory(db, batchId, reqId),
    lockRows: '',
  };
  return {
    run: (rule) => runRule(db, rule(ctx)),
    inTransaction: (rule) => insideOf(db).transaction(() => runRule(db, rule(ctx)))(),
  };
}

export const sqliteRetryCounts = (db: Journal): RetryCounts => retryCountsOf(runnerOf(db));
export const sqliteRetryStore = (db: Journal): RetryStore => retryStoreOf(runnerOf(db));
