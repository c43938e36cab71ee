// When the senders hear of released batches, and when a commit is made early for them. A released
// batch can go once the senders can see it and its rows are safe: on SQLite, once a commit holds it
// (ClosedBatches.release); on PostgreSQL, once the transaction that released it commits.
import type { GroupCounts } from '../intake/groupCounts.js';
import { andThen } from './awaitable.js';
import type { ClosedBatches } from './closedBatches.js';
import type { Awaitable } from '../ports/awaitable.js';
import type { PlanStore } from './store.js';

/**
 * Rows read, at least, between two commits made because the senders wait (as the bulk
 * transaction's first size, journal/bulk.ts): ~25 batches of the bench's large groups. Early in a
 * file, when only full batches can go (the group counts are not in yet), the bulk commits (5,000
 * rows, then doubling) come tenths of a second apart and the senders would sit idle between them.
 * Each commit costs intake a few ms:
 * where the senders wait because they are faster than intake (little latency), it only slows
 * intake. So not more often, and not once the counts are in: a group's last batch then goes after
 * its last row, and the senders seldom wait at 50 ms. The file's first closed batch is the
 * exception: nothing of the file has left yet, so it is committed at once, and the first request
 * leaves after the chunk that filled it, not after the first 5,000 rows (the time to the first
 * request is the whole file's delay).
 */
export const ROWS_BETWEEN_EARLY_COMMITS = 5_000;

export class ReleaseNotices {
  readonly #store: PlanStore;
  readonly #closed: ClosedBatches;
  readonly #onRelease: (() => void) | undefined;
  readonly #sendersWaiting: (() => boolean) | undefined;
  readonly #groupCounts: GroupCounts | undefined;
  /** Releases not told yet (releasesSeenAtCommit), and the commits when they were made. */
  #untold = { releases: 0, commits: 0 };
  /** The one commit for the batches of the groups ended when the group counts came in is made. */
  #committedForCounts = false;
  /** Rows written since the last commit seen (store.commits()), and that count of commits. */
  #sinceCommit = { rows: 0, commits: 0 };
  /** The senders were told of a release of this file: its first batch can go. */
  #toldOnce = false;

  constructor(
    store: PlanStore,
    closed: ClosedBatches,
    onRelease: (() => void) | undefined,
    sendersWaiting: (() => boolean) | undefined,
    groupCounts: GroupCounts | undefined,
  ) {
    this.#store = store;
    this.#closed = closed;
    this.#onRelease = onRelease;
    this.#sendersWaiting = sendersWaiting;
    this.#groupCounts = groupCounts;
    this.#sinceCommit.commits = store.commits();
  }

  /** `count` batches were released in the open transaction. */
  released(count: number): void {
    if (count === 0) return;
    if (this.#store.releasesSeenAtCommit)
      this.#untold = { releases: this.#untold.releases + count, commits: this.#store.commits() };
    else this.#tell();
  }

  /** A chunk of `rows` rows was written: commits early if the senders wait, then tells. */
  afterChunk(rows: number): Awaitable<void> {
    return andThen(this.#commitForWaitingSenders(rows), () => this.tellCommitted());
  }

  /** Releases the senders can see now (their transaction committed) are told of. */
  tellCommitted(): void {
    if (this.#untold.releases === 0 || this.#store.commits() === this.#untold.commits) return;
    this.#untold.releases = 0;
    this.#tell();
  }

  #tell(): void {
    this.#toldOnce = true;
    this.#onRelease?.();
  }

  /**
   * Commits now if the senders wait for batches a commit would let go: as soon as the file's
   * first batch closes, then every ROWS_BETWEEN_EARLY_COMMITS rows until the group counts are in,
   * and once when they come in (the groups read in full by then end at once, and their batches
   * would wait for the next bulk commit, the senders idle meanwhile).
   */
  #commitForWaitingSenders(rows: number): Awaitable<void> {
    const commits = this.#store.commits();
    // A bulk commit made in this chunk's write came after its rows.
    if (commits !== this.#sinceCommit.commits) this.#sinceCommit = { rows: 0, commits };
    else this.#sinceCommit.rows += rows;
    if (!this.#groupCounts || !this.#sendersWaiting?.()) return undefined;
    const countsIn = this.#groupCounts.ready;
    const due = countsIn
      ? !this.#committedForCounts
      : !this.#toldOnce || this.#sinceCommit.rows >= ROWS_BETWEEN_EARLY_COMMITS;
    if (!due) return undefined;
    if (this.#untold.releases === 0 && !this.#closed.awaitingCommit()) return undefined;
    this.#committedForCounts = countsIn;
    return andThen(this.#store.commit(), () => {
      this.#sinceCommit = { rows: 0, commits: this.#store.commits() };
    });
  }
}
