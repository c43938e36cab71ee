// Whose turn it is to read a file into the journal: one per Runtime, so that the intakes of one
// journal run one after the other.

/**
 * Intakes of one journal run one after the other. A file's rows are checked against the rows of
 * the files read before it (sentBefore.ts): two copies of a list read at once would each miss the
 * other's. Reading is the main thread's work anyway, so two at once were no quicker; the files
 * already read go on sending meanwhile.
 */
export class IntakeTurns {
  #last: Promise<void> = Promise.resolve();

  /**
   * Resolves, once the intakes before have ended theirs, to the function that ends this one's turn
   * (called once its rows are all in the journal; calling it again does nothing).
   */
  async next(): Promise<() => void> {
    const before = this.#last;
    let turnOver!: () => void;
    const mine = new Promise<void>((resolve) => (turnOver = resolve));
    this.#last = before.then(() => mine);
    await before;
    return turnOver;
  }
}
