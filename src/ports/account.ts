// The account's request slots, when several processes send on one account (nodes sharing a
// PostgreSQL journal): SMSDROP_CONCURRENCY is the account's limit, not each node's. A request holds
// a slot from just before its attempt is written until its answer is in. With one process (the
// SQLite journal) there is no such port: the process's own p-limit is the account's limit.

/** Gives a slot back (once; later calls do nothing). */
export type SlotRelease = () => void;

export interface AccountSlots {
  /**
   * Waits for a free slot of the account; resolves with its release, or undefined once `signal`
   * aborts first.
   */
  take(signal?: AbortSignal): Promise<SlotRelease | undefined>;
  /**
   * The account's level: slots above it are not taken (lowered on "too many requests" answers and
   * raised back, send/concurrency.ts), at most the setting. Setting it takes effect for every
   * node; requests already in flight keep their slots.
   */
  concurrency: number;
  /** Stops renewing; the slots still held are given back. */
  close(): Promise<void>;
}
