// Whose turn it is to read a file into the journal: one per Runtime, so that the intakes of one
// journal run one after the other.
import type { FileStore } from '../ports/files.js';

/**
 * Intakes of one journal run one after the other. A file's rows are checked against the rows of
 * the files read before it (sentBefore.ts): two copies of a list read at once would each miss the
 * other's. Reading is the main thread's work anyway, so two at once were no quicker; the files
 * already read go on sending meanwhile. The journal's own turn (FileStore.intakeTurn) is taken
 * inside this process's: other processes sharing the journal (nodes on PostgreSQL) wait for it.
 */
export class IntakeTurns {
  readonly #journal: Pick<FileStore, 'intakeTurn'>;
  #last: Promise<void> = Promise.resolve();

  constructor(journal: Pick<FileStore, 'intakeTurn'>) {
    this.#journal = journal;
  }

  /**
   * Resolves, once the intakes before have ended theirs and the journal's turn is this one's, to
   * the function that ends this one's turn (called once its rows are all in the journal; calling it
   * again does nothing). A stop while waiting for the journal ends the wait: the caller sees it.
   * `wish` is handed to the journal's turn (FileStore.intakeTurn).
   */
  async next(stop?: AbortSignal, wish?: { bytes?: number }): Promise<() => void> {
    const before = this.#last;
    let ours!: () => void;
    const mine = new Promise<void>((resolve) => (ours = resolve));
    this.#last = before.then(() => mine);
    await before;
    let journalTurnOver: () => Promise<void>;
    try {
      journalTurnOver = await this.#journal.intakeTurn(stop, wish);
    } catch (error) {
      ours();
      throw error;
    }
    let over = false;
    return () => {
      if (over) return;
      over = true;
      // The next intake here waits for the journal's turn to be given back, not only for this one.
      void journalTurnOver().finally(ours);
    };
  }
}
