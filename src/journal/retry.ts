// `smsdrop retry` on SQLite: the journal rules of src/journalRules/retry.ts (which say what a retry
// does and why), run on this connection, and where a retry's numbers stand after it.
import { attemptHistory } from './attempts.js';
import { insideOf, type Journal } from './connection.js';
import { runRule, SQLITE_RULES } from './rules.js';
import { nowIso } from './sql.js';
import * as rules from '../journalRules/retry.js';
import type { RetryContext } from '../journalRules/retry.js';
import type {
  KeepsOwnReqId,
  PreparedRetry,
  RetryOutcome,
  RetryStatus,
  SentBeforeLookup,
  UnknownRule,
} from '../ports/records.js';

/** What the retry rules (src/journalRules/retry.ts) are given on SQLite: the one writer locks. */
function retryContext(db: Journal): RetryContext {
  return {
    ...SQLITE_RULES,
    attemptHistory: (batchId, reqId) => attemptHistory(db, batchId, reqId),
    lockRows: '',
  };
}

export function countUnknownByReqId(
  db: Journal,
  fileId: number,
  maxPerRequest: number,
  keepsOwnReqId: KeepsOwnReqId,
): { ownReqId: number; newReqId: number } {
  return runRule(
    db,
    rules.countUnknownByReqId(retryContext(db), fileId, maxPerRequest, keepsOwnReqId),
  );
}

export function countRetryable(
  db: Journal,
  fileId: number,
  statuses: readonly RetryStatus[],
): number {
  return runRule(db, rules.countRetryable(fileId, statuses));
}

/** See src/journalRules/retry.ts, prepareRetry: here in one transaction. */
export function prepareRetry(
  db: Journal,
  fileId: number,
  statuses: readonly RetryStatus[],
  maxPerRequest: number,
  unknown: UnknownRule = rules.NEW_REQ_IDS_ONLY,
  sentBefore?: SentBeforeLookup,
): PreparedRetry {
  return insideOf(db).transaction(() =>
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
  )();
}

/** Where the numbers of one retry stand now: the batches it created and their split halves. */
export function retryOutcome(db: Journal, fileId: number, retry: PreparedRetry): RetryOutcome {
  return runRule(db, rules.retryOutcome(fileId, retry));
}
