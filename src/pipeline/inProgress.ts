// The journal records of the files being processed now (the daemon runs several at once): one set
// per Runtime, read by whoever must leave such a file alone (taking a grown file over, pruning,
// serving its result file, the metrics).

/** What readers of the set may ask: whether a file is being processed, and how many are. */
export interface FilesBeingProcessed {
  has(fileId: number): boolean;
  readonly size: number;
}

export class FilesInProgress implements FilesBeingProcessed {
  readonly #ids: Set<number>;
  /** Files whose batches this process sends for another node's reader (daemon/helpOtherNodes). */
  readonly #helped = new Map<number, Promise<void>>();
  readonly #helpedLately = new Set<number>();

  /** `ids`: the set to keep them in. */
  constructor(ids = new Set<number>()) {
    this.#ids = ids;
  }

  has(fileId: number): boolean {
    return this.#ids.has(fileId);
  }

  add(fileId: number): void {
    this.#ids.add(fileId);
  }

  delete(fileId: number): void {
    this.#ids.delete(fileId);
  }

  /**
   * Marks a file another node reads as sent here (one pass over its due batches), unless it is
   * processed here or sent here already; returns what ends the mark. One process never runs two
   * sending loops on one file: each would claim the batches the other holds (a node may claim its
   * own leased batches again) and act on its own stale copy of them.
   */
  help(fileId: number): (() => void) | undefined {
    if (this.#ids.has(fileId) || this.#helped.has(fileId)) return undefined;
    let over!: () => void;
    this.#helpedLately.add(fileId);
    this.#helped.set(fileId, new Promise<void>((resolve) => (over = resolve)));
    return () => {
      this.#helped.delete(fileId);
      over();
    };
  }

  /** Resolves once no pass for another node's reader sends the file here. */
  helpOver(fileId: number): Promise<void> {
    return this.#helped.get(fileId) ?? Promise.resolve();
  }

  /**
   * The files whose batches this process sent for another node's reader since the last call, or
   * sends now (a progress line's: the passes come and go between two lines).
   */
  takeHelped(): number[] {
    const ids = new Set([...this.#helpedLately, ...this.#helped.keys()]);
    this.#helpedLately.clear();
    return [...ids];
  }

  get size(): number {
    return this.#ids.size;
  }
}
