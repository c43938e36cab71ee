// Batches that take no more numbers (full, or their group ended) and wait to be released, i.e.
// made due so that sending may take them while the rest of the file is read. They are released
// when the next chunk is written: their rows are then followed by more of the file, so none of
// them can be the half-written end of a file still being copied (the caller checks the file's size
// after each chunk, before sending can run). With requests' commits deferred (journal intents), a
// batch is released only once a commit holds it, its numbers and its rows.
import type { PlanStore } from './store.js';

export class ClosedBatches {
  /** Each closed batch, with the count of commits when it closed. */
  readonly #commitsWhenClosed = new Map<number, number>();

  constructor(readonly store: PlanStore) {}

  close(batchId: number): void {
    this.#commitsWhenClosed.set(batchId, this.store.commits());
  }

  /** Closed and still held in the journal: a group loaded again must not take it up. */
  has(batchId: number): boolean {
    return this.#commitsWhenClosed.has(batchId);
  }

  /** Some closed batch may go only after the next commit (releaseOnlyCommitted). */
  awaitingCommit(): boolean {
    if (!this.store.releaseOnlyCommitted) return false;
    const commits = this.store.commits();
    for (const commitsWhenClosed of this.#commitsWhenClosed.values())
      if (commitsWhenClosed === commits) return true;
    return false;
  }

  /** Releases the closed batches that may go now; returns how many. */
  release(): number {
    const commits = this.store.commits();
    const onlyCommitted = this.store.releaseOnlyCommitted;
    let released = 0;
    for (const [batchId, commitsWhenClosed] of this.#commitsWhenClosed) {
      if (onlyCommitted && commitsWhenClosed === commits) continue;
      this.store.releaseBatch(batchId);
      this.#commitsWhenClosed.delete(batchId);
      released++;
    }
    return released;
  }
}
