// `smsdrop retry` on the PostgreSQL journal: the journal rules of src/journalRules/retry.ts (which
// say what a retry does and why), in one transaction, the file's chosen batches locked first
// (FOR UPDATE), so that two retries at once cannot both move one batch.
import type pg from 'pg';
import type { RetryStore } from '../ports/retry.js';
import * as rules from '../journalRules/retry.js';
import type { RetryContext } from '../journalRules/retry.js';
import { RELEASING, runRule } from './rules.js';
import { attemptHistory } from './sendReads.js';
import { type Queryable, withTransaction } from './smallTransaction.js';

/** What the retry rules are given on PostgreSQL: reads on `db`, the chosen batches locked. */
function retryContext(db: Queryable): RetryContext {
  return {
    ...RELEASING,
    attemptHistory: (batchId, reqId) => attemptHistory(db, batchId, reqId),
    lockRows: ' FOR UPDATE',
  };
}

export function pgRetryStore(pool: pg.Pool): RetryStore {
  return {
    countUnknownByReqId: (fileId, maxPerRequest, keepsOwnReqId) =>
      runRule(
        pool,
        rules.countUnknownByReqId(retryContext(pool), fileId, maxPerRequest, keepsOwnReqId),
      ),
    countRetryable: (fileId, statuses) => runRule(pool, rules.countRetryable(fileId, statuses)),
    prepareRetry: (fileId, statuses, maxPerRequest, unknown = rules.NEW_REQ_IDS_ONLY, sentBefore) =>
      withTransaction(pool, (client) =>
        runRule(
          client,
          rules.prepareRetry(
            retryContext(client),
            fileId,
            statuses,
            maxPerRequest,
            unknown,
            sentBefore,
            new Date().toISOString(),
          ),
        ),
      ),
    retryOutcome: (fileId, retry) => runRule(pool, rules.retryOutcome(fileId, retry)),
  };
}
