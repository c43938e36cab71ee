// A file's intake written by a thread of its own, on its own connection to the journal, while the
// sending thread goes on with its requests (pipeline/intakeThread.ts). What the sending thread's
// journal must offer for that: where the other thread opens it, and a gate its writes pass while
// that thread writes.

/**
 * Turns the journal's writes between the two threads. SQLite lets one connection write at a time
 * (WAL): the intake's thread holds its transaction between chunks of rows, and hands the journal
 * over when the sending thread asks. A journal whose writers do not block one another (PostgreSQL)
 * needs no gate.
 */
export interface WriteGate {
  /** Resolves once this thread may write; undefined: it may write at once. */
  acquire(): Promise<void> | undefined;
  /** This thread's writes are committed: the other thread may write again. */
  release(): void;
}

export interface IntakeWriterLink {
  /** What the intake's thread opens (for SQLite, the journal's file). */
  readonly location: string;
  /** From now until the returned function is called, this journal's queued writes pass `gate`. */
  shareWrites(gate: WriteGate): () => void;
  /** These batches (planned on the other thread) go before the file's other due batches. */
  sendFirst(batchIds: readonly number[]): void;
}
