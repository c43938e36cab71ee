// `smsdrop retry` on SQLite: the journal rules of src/journalRules/retry.ts (which say what a retry
// does and why), run on this connection, the preparation in one transaction.
import { attemptHistory } from './sendReads.js';
import { insideOf, type Journal } from './connection.js';
import { runRule, SQLITE_RULES } from './rules.js';
import { nowIso } from './sql.js';
import * as rules from '../journalRules/retry.js';
import type { RetryContext } from '../journalRules/retry.js';
import type { RetryCounts, RetryStore } from '../ports/retry.js';

/** What the retry rules are given on SQLite: the one writer needs no lock. */
function retryContext(db: Journal): RetryContext {
  return {
    ...SQLITE_RULES,
    attemptHistory: (batchId, reqId) => attemptHistory(db, batchId, reqId),
    lockRows: '',
  };
}

/** The retry counts alone: they only read, so a read-only journal has them too. */
export function sqliteRetryCounts(db: Journal): RetryCounts {
  return {
    countUnknownByReqId: (fileId, maxPerRequest, keepsOwnReqId) =>
      runRule(
        db,
        rules.countUnknownByReqId(retryContext(db), fileId, maxPerRequest, keepsOwnReqId),
      ),
    countRetryable: (fileId, statuses) => runRule(db, rules.countRetryable(fileId, statuses)),
  };
}

export function sqliteRetryStore(db: Journal): RetryStore {
  return {
    ...sqliteRetryCounts(db),
    prepareRetry: (fileId, statuses, maxPerRequest, unknown = rules.NEW_REQ_IDS_ONLY, sentBefore) =>
      insideOf(db).transaction(() =>
        runRule(
          db,
          rules.prepareRetry(
            retryContext(db),
            fileId,
            statuses,
            maxPerRequest,
            unknown,
            sentBefore,
            nowIso(),
          ),
        ),
      )(),
    retryOutcome: (fileId, retry) => runRule(db, rules.retryOutcome(fileId, retry)),
  };
}
