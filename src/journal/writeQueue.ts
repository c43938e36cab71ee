// Journal writes of concurrent requests, coalesced: every write asked for during one turn of the
// event loop runs in one transaction, and each caller's promise settles once that transaction has
// committed. With 16 requests in flight this is one commit where there would be 16, and the rule
// that an attempt is on disk before its request leaves still holds: the request waits for it.
// While an intake holds its bulk transaction open (bulk.ts), the turn's writes join it and the one
// commit carries both (test/journal/writeQueue.test.ts); or, with intents enabled (intents.ts),
// the transaction stays open and only the turn's intents are committed, in their own small file.
import { SmsdropError } from '../errors.js';
import { bulkOpenMs, commitBulk, noteIfRolledBack } from './bulk.js';
import {
  commitIntents,
  forgetNoted,
  intentsEnabled,
  journalCommitted,
  JournalLostError,
  journalLost,
  takeMustCommit,
} from './intents.js';
import { connectionOf, insideOf, type Journal, type WriteQueue } from './connection.js';

export type { WriteQueue };

interface Job {
  write: () => unknown;
  resolve: (value: unknown) => void;
  reject: (error: unknown) => void;
}

/** The one queue of a journal (files in progress together share it). */
export function writeQueueFor(db: Journal): WriteQueue {
  return (insideOf(db).writeQueue ??= createWriteQueue(db));
}

/**
 * How long an intake's transaction may stay open while requests run on intents (intents.ts): a
 * crash loses at most this much of answers, which then cost a request each (same reqId), not a
 * message.
 */
export const MAX_DEFERRED_MS = 2_000;

/**
 * This turn's writes may stay in the intake's open transaction, their requests made safe by
 * intents.
 */
function mayDefer(db: Journal): boolean {
  const openMs = bulkOpenMs(db);
  return (
    intentsEnabled(db) &&
    connectionOf(db).inTransaction &&
    openMs !== undefined &&
    openMs < MAX_DEFERRED_MS
  );
}

function createWriteQueue(db: Journal): WriteQueue {
  let jobs: Job[] = [];
  const runAll = insideOf(db).transaction((batch: Job[], results: unknown[]) => {
    for (const job of batch) results.push(job.write());
  });
  const commitQueued = (): void => {
    const batch = jobs;
    jobs = [];
    commitTurn(db, batch, runAll);
  };
  return {
    run<T>(write: () => T): Promise<T> {
      return new Promise<T>((resolve, reject) => {
        if (jobs.length === 0) setImmediate(commitQueued);
        jobs.push({ write, resolve: resolve as (value: unknown) => void, reject });
      });
    },
    waiting: () => jobs.length > 0,
  };
}

/**
 * One turn's writes: run in one transaction, then committed (or, with intents, left in the
 * intake's open transaction); each caller's promise settles once its write is on disk, or fails.
 */
function commitTurn(
  db: Journal,
  batch: Job[],
  runAll: (batch: Job[], results: unknown[]) => void,
): void {
  const fail = (err: unknown): void => {
    forgetNoted(db);
    for (const job of batch) job.reject(err);
  };
  if (journalLost(db)) return fail(new JournalLostError());
  const results: unknown[] = [];
  try {
    // Inside an intake's open bulk transaction this is a savepoint, and the commit below carries
    // both: one commit per turn, not two (the intake's, then these writes').
    runAll(batch, results);
  } catch (err) {
    // Rolled back as a whole (to its savepoint): no caller may act as if its write were on disk.
    // A full disk may have rolled back the intake's transaction too: its writer must know.
    noteIfRolledBack(db);
    return fail(err);
  }
  const mustCommit = takeMustCommit(db);
  if (!mustCommit && mayDefer(db)) {
    // The intake's transaction stays open: the requests' intents make them safe (intents.ts).
    let onIntents = true;
    try {
      commitIntents(db);
    } catch {
      onIntents = false; // the side file failed: commit the journal instead, below
    }
    if (onIntents) {
      batch.forEach((job, i) => job.resolve(results[i]));
      return;
    }
  }
  try {
    commitBulk(db);
  } catch (err) {
    // SQLite rolled back the bulk transaction, these writes too
    return fail(journalLost(db) ? new JournalLostError() : err);
  }
  // Nothing else keeps a transaction open across turns: were one open, these writes would be
  // only part of it, not on disk.
  if (connectionOf(db).inTransaction)
    return fail(
      new SmsdropError(
        'E_INTERNAL',
        'journal writes were not committed: a transaction is still open',
      ),
    );
  journalCommitted(db);
  batch.forEach((job, i) => job.resolve(results[i]));
}
