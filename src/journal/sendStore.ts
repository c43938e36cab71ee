// SendStore on the SQLite journal: the sender's reads and the writes around each request, the
// writes through the journal's one per-turn write queue (writeQueue.ts), so every start and
// outcome asked for in one turn of the event loop shares one transaction.
import {
  applyTransition,
  dueBatches,
  dueFirst,
  finishAttempt,
  recoverInterrupted,
  startAttempt,
} from './sendMoves.js';
import { attemptHistory, recentStarts } from './sendReads.js';
import { providerSilentFor } from '../journalRules/providerSilence.js';
import { runRule, SQLITE_DIALECT } from './rules.js';
import type { Journal } from './connection.js';
import { nextDueAt } from './reportReads.js';
import { writeQueueFor } from './writeQueue.js';
import type { AttemptStart, DueQuery, Outcome, SendStore } from '../ports/send.js';
import type { AttemptHistory, BatchToSend } from '../ports/records.js';

export class SqliteSendStore implements SendStore {
  readonly #db: Journal;

  constructor(db: Journal) {
    this.#db = db;
  }

  claimDueBatches(q: DueQuery): { first: BatchToSend[]; due: BatchToSend[] } {
    const first = dueFirst(this.#db, q.fileId, q.now).filter((b) => !q.skip.has(b.batch.id));
    const firstIds = new Set(first.map((b) => b.batch.id));
    const due = dueBatches(this.#db, q.fileId, q.now, q.afterId, q.limit).filter(
      (b) => !q.skip.has(b.batch.id) && !firstIds.has(b.batch.id),
    );
    return { first, due };
  }

  startAttempts(starts: readonly AttemptStart[]): Promise<(number | undefined)[]> {
    const queue = writeQueueFor(this.#db);
    return Promise.all(
      starts.map(({ batch, reqId }) => queue.run(() => startAttempt(this.#db, batch, reqId))),
    );
  }

  async recordOutcomes(outcomes: readonly Outcome[]): Promise<void> {
    const queue = writeQueueFor(this.#db);
    await Promise.all(
      outcomes.map(({ batchId, transition, attempt }) =>
        queue.run(() =>
          attempt
            ? finishAttempt(this.#db, attempt.id, batchId, attempt.result, transition)
            : applyTransition(this.#db, batchId, transition),
        ),
      ),
    );
  }

  recoverInterrupted(fileId: number, reqIdOn: boolean): number {
    return recoverInterrupted(this.#db, fileId, reqIdOn);
  }

  nextDueAt(fileId: number): number | null {
    return nextDueAt(this.#db, fileId);
  }

  attemptHistory(batchId: number, reqId: string): AttemptHistory {
    return attemptHistory(this.#db, batchId, reqId);
  }

  providerSilentFor(batchId: number, attempts: number): boolean {
    return runRule(this.#db, providerSilentFor(SQLITE_DIALECT, batchId, attempts, null));
  }

  recentStarts(sinceMs: number): { at: number; numbers: number }[] {
    return recentStarts(this.#db, sinceMs);
  }

  writesPending(): boolean {
    return writeQueueFor(this.#db).waiting();
  }
}
