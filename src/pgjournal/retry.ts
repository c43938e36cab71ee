// `smsdrop retry` on the PostgreSQL journal: the journal rules of src/journalRules/retry.ts (which
// say what a retry does and why), the preparation in one transaction, the file's chosen batches
// locked first (FOR UPDATE), so that two retries at once cannot both move one batch.
import type pg from 'pg';
import type { RetryStore } from '../ports/retry.js';
import { type RetryContext, type RetryRunner, retryStoreOf } from '../journalRules/retry.js';
import { RELEASING, runRule } from './rules.js';
import { attemptHistory } from './sendReads.js';
import { type Queryable, withTransaction } from './smallTransaction.js';

/** The retry's rules' context on `db`: reads there, the chosen batches locked. */
function contextOn(db: Queryable): RetryContext {
  return {
    ...RELEASING,
    attemptHistory: (batchId, reqId) => attemptHistory(db, batchId, reqId),
    lockRows: ' FOR UPDATE',
  };
}

export function pgRetryStore(pool: pg.Pool): RetryStore {
  const runner: RetryRunner = {
    run: (rule) => runRule(pool, rule(contextOn(pool))),
    inTransaction: (rule) =>
      withTransaction(pool, (client) => runRule(client, rule(contextOn(client)))),
  };
  return retryStoreOf(runner);
}
