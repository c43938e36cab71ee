// The account's limits, when several processes send on one account (nodes sharing a PostgreSQL
// journal): SMSDROP_CONCURRENCY, the pacing (requests and numbers per second, the message window)
// and the outage pause are the account's, not each node's. A request holds a slot from just
// before its attempt is written until its answer is in (or, with no answer, for as long as the
// provider may still count it). With one process (the SQLite journal)
// there is no such port: the process's own p-limit, pacing and pause are the account's.

/**
 * A slot held. Called, it gives the slot back (once; later calls do nothing): `unanswered` when
 * its request was written and no answer came (in doubt, or the send threw), which the provider
 * may still count for a while, so the slot is not at once another request's.
 */
export interface SlotRelease {
  (ended?: 'answered' | 'unanswered'): void;
  /** The slot is still surely this node's by its own clock: asked as the request starts. */
  stillHeld(): boolean;
}

export interface AccountSlots {
  /**
   * Waits for a free slot of the account; resolves with its release, or undefined once `signal`
   * aborts first, or once the account is paused and this node knows it (pause's watcher told).
   */
  take(signal?: AbortSignal): Promise<SlotRelease | undefined>;
  /**
   * The account's level: slots above it are not taken (lowered on "too many requests" answers and
   * raised back, send/concurrency.ts), at most the setting. Setting it takes effect for every
   * node; requests already in flight keep their slots.
   */
  concurrency: number;
  /** The account's pacing, every node's starts counted together. */
  rate: AccountRate;
  /** The account's pause, seen by every node. */
  pause: SharedPause;
  /** Stops renewing; the slots still held are given back. */
  close(): Promise<void>;
}

/** A node's pacing settings (the same on every node), in the units the journal keeps. */
export interface AccountPacing {
  /** 1000 / requestsPerSecond: ms between two request starts; 0: no such limit. */
  requestMs: number;
  /** 1000 / messagesPerSecond: ms a number takes; 0: no such limit. */
  messageMs: number;
  /** The message window's length and numbers; windowMs 0: no window. */
  windowMs: number;
  windowMessages: number;
}

/** A request start reserved for every node: it may start once `waitMs` has passed. */
export interface ReservedStart {
  full: false;
  waitMs: number;
  /** Its attempt is written: the window counts it from now (not awaited). */
  started(): void;
  /** It never left: its numbers do not use up the window (not awaited). */
  giveBack(): void;
}

/** The window has no room now: ask again in `waitMs`. */
export interface WindowFull {
  full: true;
  waitMs: number;
}

export interface AccountRate {
  /** One start, reserved for every node at once (one statement). */
  reserve(numbers: number, pacing: AccountPacing): Promise<ReservedStart | WindowFull>;
  /**
   * Counts `starts` (the journal's attempts of the window's last span, ms since the epoch) in a
   * window that holds none yet: what was sent before the nodes kept their window.
   */
  seedWindow(starts: readonly { at: number; numbers: number }[], windowMs: number): Promise<void>;
}

/** Why the account is paused, as send/rate.ts's AccountPause says it. */
export interface PauseState {
  reason: string;
  /** A PauseCode (send/rate.ts). */
  code: string;
  statusCode?: string | undefined;
}

export interface PauseWatcher {
  /** Another node paused the account. */
  paused(state: PauseState & { node: string }): void;
  /** The pause this node is in lifted (its node's cooldown is over, or it lapsed). */
  lifted(): void;
}

export interface SharedPause {
  /** This node pauses the account, for every node, for at most `holdMs` (its cooldown). */
  pause(state: PauseState, holdMs: number): void;
  /** This node's cooldown is over: the pause lifts for every node (they try again). */
  resume(): void;
  /** The one watcher told of the others' pauses and of lifts. */
  watch(watcher: PauseWatcher): void;
}
