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

  get size(): number {
    return this.#ids.size;
  }
}
