// Request pacing, shared by every file in progress. Three limits, each off by default, so that a
// provider's channel limit or the business's own is kept however many files run:
//   requestsPerSecond  request starts per second, spaced evenly (no bursts at second boundaries);
//   messagesPerSecond  numbers per second: a request of n numbers takes n of them, so the next
//                      request starts n / rate seconds after it;
//   messageWindow      at most N numbers in requests started within any span of the window's
//                      length (a sliding window, e.g. 10000/1h). The journal's attempts of the
//                      window's last span count too, so a restart does not start a fresh window.
// A request that the provider cannot have sent (never written to the socket, or refused as a
// whole) gives its numbers back to the window: only what may have gone out uses it up.
import type { MessageWindow } from '../config/settings/windows.js';
import type { Awaitable } from '../ports/awaitable.js';
import type { SharedPause } from '../ports/account.js';
import type { AccountStopCode } from '../provider/codes.js';
import { onStop, sleepUnlessStopped } from './sleep.js';

/** Why sending stopped for the account, as a code (docs/errors.md). */
export type PauseCode =
  AccountStopCode | 'E_PROVIDER_TLS' | 'E_PROVIDER_UNREACHABLE' | 'E_PROVIDER_FAILING';

/** Pauses of no business answer: one node's view of the provider (its network, its CA). */
const NO_ANSWER: string[] = ['E_PROVIDER_TLS', 'E_PROVIDER_UNREACHABLE', 'E_PROVIDER_FAILING'];

/** A request's start as the window counts it: `at` in ms since the epoch. */
export interface WindowStart {
  at: number;
  numbers: number;
}

export interface RateLimits {
  requestsPerSecond?: number;
  messagesPerSecond?: number;
  messageWindow?: MessageWindow;
  /**
   * Starts already made within the window's last span (the journal's: SendStore.recentStarts).
   * Read before the first request is let through.
   */
  startedBefore?: Awaitable<readonly WindowStart[]>;
  /** Told when the window holds requests back, once per hold, so a limit never acts unseen. */
  onWindowFull?: (e: { window: string; resumesAt: string; waitMs: number }) => void;
  /**
   * Told when a hold said by onWindowFull ends: a held request starts, or the last one held gives
   * up.
   */
  onWindowRoom?: () => void;
  /** The window's clock (tests): ms since the epoch. */
  now?: () => number;
}

/** A request allowed to start. */
export interface StartTicket {
  /**
   * The request leaves now (its attempt is in the journal): the window counts it from here, not
   * from when it was let through, so that no two starts the journal records are closer than
   * allowed.
   */
  started(): void;
  /**
   * The provider cannot have sent it (never written, or refused as a whole): its numbers do not use
   * up the window.
   */
  giveBack(): void;
}

export interface RateLimiter {
  /**
   * Resolves when a request of `numbers` numbers may start; undefined when `signal` stopped the
   * wait.
   */
  take(numbers: number, signal?: AbortSignal): Promise<StartTicket | undefined>;
}

const NOTHING_TO_GIVE_BACK: StartTicket = { started: () => {}, giveBack: () => {} };

export function createRateLimiter(limits: RateLimits = {}): RateLimiter {
  const window = limits.messageWindow ? new SlidingWindow(limits.messageWindow, limits) : undefined;
  const byRequest = limits.requestsPerSecond ? pacer(limits.requestsPerSecond) : undefined;
  const byMessage = limits.messagesPerSecond ? pacer(limits.messagesPerSecond) : undefined;
  if (!window && !byRequest && !byMessage)
    return {
      take: (_numbers, signal) =>
        Promise.resolve(signal?.aborted ? undefined : NOTHING_TO_GIVE_BACK),
    };
  return {
    async take(numbers, signal) {
      // The window first: after a long hold the per-second pacing starts afresh.
      const ticket = window ? await window.take(numbers, signal) : NOTHING_TO_GIVE_BACK;
      if (!ticket) return undefined;
      const paced =
        (!byRequest || (await byRequest(1, signal))) &&
        (!byMessage || (await byMessage(numbers, signal)));
      if (paced) return ticket;
      ticket.giveBack(); // stopped while paced: it never left
      return undefined;
    },
  };
}

/** `perSecond` units per second, spaced evenly: each take reserves the next slot at once. */
function pacer(perSecond: number): (units: number, signal?: AbortSignal) => Promise<boolean> {
  let nextSlot = 0;
  return async (units, signal) => {
    const now = performance.now();
    const slot = Math.max(now, nextSlot);
    nextSlot = slot + (units * 1000) / perSecond;
    if (slot > now) await sleepUnlessStopped(slot - now, signal);
    return !signal?.aborted;
  };
}

/** How long one wait sleeps before it looks again (a clock change, a number given back). */
const LOOK_AGAIN_MS = 1_000;

/**
 * At most `messages` numbers in requests started within any `ms`. Requests are let through one at
 * a time, in the order they asked: a large request is not overtaken forever by small ones.
 */
class SlidingWindow {
  readonly #limit: MessageWindow;
  readonly #now: () => number;
  readonly #onFull: RateLimits['onWindowFull'];
  readonly #onRoom: RateLimits['onWindowRoom'];
  /** Starts still inside the window, oldest first (nearly: see started()). */
  #starts: WindowStart[] = [];
  /** Numbers of #starts, summed. */
  #used = 0;
  #queue: Promise<unknown> = Promise.resolve();
  /** take() calls not yet settled, queued or at the front. */
  #waiters = 0;
  #holding = false;

  constructor(limit: MessageWindow, options: RateLimits) {
    this.#limit = limit;
    this.#now = options.now ?? Date.now;
    this.#onFull = options.onWindowFull;
    this.#onRoom = options.onWindowRoom;
    const before = options.startedBefore ?? [];
    // Every take waits its turn behind #queue: a journal that answers later is read first.
    if (before instanceof Promise) this.#queue = before.then((starts) => this.#startWith(starts));
    else this.#startWith(before);
  }

  #startWith(starts: readonly WindowStart[]): void {
    this.#starts = [...starts].sort((a, b) => a.at - b.at);
    for (const s of this.#starts) this.#used += s.numbers;
  }

  take(numbers: number, signal?: AbortSignal): Promise<StartTicket | undefined> {
    this.#waiters++;
    const turn = this.#queue
      .then(() => this.#admit(numbers, signal))
      .finally(() => this.#waiters--);
    this.#queue = turn.catch(() => {});
    return signal ? untilAborted(turn, signal) : turn;
  }

  async #admit(numbers: number, signal?: AbortSignal): Promise<StartTicket | undefined> {
    for (;;) {
      if (signal?.aborted) {
        // The last waiter of a hold gave up (a stop, the end of a file's reading): nothing is held
        // now. Said, so that `smsdrop status` stops showing WAITING; a new hold is said again.
        if (this.#holding && this.#waiters <= 1) {
          this.#holding = false;
          this.#onRoom?.();
        }
        return undefined;
      }
      const now = this.#now();
      const waitMs = this.#waitFor(numbers, now);
      if (waitMs === 0) {
        if (this.#holding) this.#onRoom?.();
        this.#holding = false;
        const start = { at: now, numbers };
        this.#starts.push(start);
        this.#used += numbers;
        return {
          // Later starts may then come before it in #starts: it only leaves the window later.
          started: () => void (start.at = Math.max(start.at, this.#now())),
          giveBack: () => this.#remove(start),
        };
      }
      // A hold of less than a second (a start a few ms late) is not worth a line in the log.
      if (!this.#holding && waitMs >= LOOK_AGAIN_MS) {
        this.#holding = true;
        this.#onFull?.({
          window: this.#limit.text,
          resumesAt: new Date(now + waitMs).toISOString(),
          waitMs,
        });
      }
      await sleepUnlessStopped(Math.min(waitMs, LOOK_AGAIN_MS), signal);
    }
  }

  /** Milliseconds until `numbers` more fit in the window: 0 when they fit now. */
  #waitFor(numbers: number, now: number): number {
    const since = now - this.#limit.ms;
    while (this.#starts.length > 0 && this.#starts[0]!.at <= since)
      this.#used -= this.#starts.shift()!.numbers;
    const used = this.#used;
    // A request larger than the whole window (configuration forbids it) goes alone in a window.
    const allowed = Math.max(this.#limit.messages, numbers);
    if (used + numbers <= allowed) return 0;
    // The oldest starts leave the window first: wait for enough of them.
    let freed = 0;
    for (const s of this.#starts) {
      freed += s.numbers;
      if (used - freed + numbers <= allowed) return Math.max(1, s.at + this.#limit.ms - now);
    }
    return this.#limit.ms;
  }

  #remove(start: WindowStart): void {
    const i = this.#starts.indexOf(start);
    if (i < 0) return; // it has left the window already
    this.#starts.splice(i, 1);
    this.#used -= start.numbers;
  }
}

/**
 * The turn, or undefined as soon as `signal` aborts: a waiter queued behind another's long wait
 * (another file's) is not kept waiting after its own stop. A ticket the turn gives after that is
 * given back.
 */
export function untilAborted(
  turn: Promise<StartTicket | undefined>,
  signal: AbortSignal,
): Promise<StartTicket | undefined> {
  return new Promise((resolve, reject) => {
    const onAbort = (): void => {
      resolve(undefined);
      turn.then(
        (ticket) => ticket?.giveBack(),
        () => {},
      );
    };
    if (signal.aborted) return onAbort();
    const forget = onStop(signal, onAbort);
    turn.then(
      (ticket) => {
        forget();
        resolve(ticket);
      },
      (err: unknown) => {
        forget();
        reject(err);
      },
    );
  });
}

/**
 * Shared "stop sending for the account" switch: set by an account-fatal answer, or by a burst
 * of requests in a row that got no business answer (provider down, 5xx, timeouts), so an outage
 * pauses the work in a resumable state instead of using up every batch's attempts.
 */
export class AccountPause {
  reason: string | undefined;
  /**
   * The pause's stable code (docs/errors.md), from a fixed set: what the operator has to fix, and
   * what /metrics labels it with, where the reason's free text (addresses, ports, the provider's
   * words) would make a new series each time.
   */
  code: PauseCode | undefined;
  statusCode: string | undefined;
  since: Date | undefined;
  #troubleInARow = 0;
  #onGoingOn: (() => void) | undefined;
  /**
   * The pause being lived through: set by pause(), kept through resume() (a cooldown's trial) and
   * gone at the first answer that lets sending go on. What /healthz and /metrics show, so that
   * they do not flicker to "on" at each cooldown of an outage.
   */
  outage: { reason: string; code: PauseCode } | undefined;
  /** The provider gave a business answer since this process started. */
  #answered = false;

  /** The pause is another node's (told through `shared`): its end is the outage's too. */
  #joined = false;
  /** Ends the cooldown being waited (cooldown()) when the account's pause lifts. */
  #onLift: (() => void) | undefined;

  /**
   * pauseAfterTrouble: requests in a row without a business answer that pause sending; 0 = never.
   * shared: the account's pause when other nodes send on it (ports/account.ts): this one's pause
   * holds them for at most `holdMs` (the cooldown), and theirs holds this one.
   */
  constructor(
    private readonly pauseAfterTrouble = 0,
    private readonly shared?: { pause: SharedPause; holdMs: number },
  ) {
    shared?.pause.watch({
      paused: ({ reason, code, statusCode, node }) => {
        if (this.reason) return;
        this.#set(`${reason} (paused by node ${node})`, code as PauseCode, statusCode);
        this.#joined = true;
      },
      lifted: () => {
        if (this.#joined) this.outage = undefined;
        this.#clear();
        this.#onLift?.();
      },
    });
  }

  /** Waits `ms` (the cooldown), less once `signal` aborts or the account's pause lifts. */
  async cooldown(ms: number, signal?: AbortSignal): Promise<void> {
    if (this.shared && !this.paused) return; // lifted already, by another node
    const lifted = new AbortController();
    this.#onLift = () => lifted.abort();
    await sleepUnlessStopped(ms, signal ? AbortSignal.any([signal, lifted.signal]) : lifted.signal);
    this.#onLift = undefined;
  }

  /**
   * A request got no business answer (not sent, in doubt, transient error); code: what it says
   * of the provider (E_PROVIDER_UNREACHABLE: nothing reached it).
   */
  noteTrouble(what: string, code: PauseCode): void {
    this.#troubleInARow++;
    if (this.pauseAfterTrouble > 0 && this.#troubleInARow >= this.pauseAfterTrouble) {
      this.pause(
        `the provider failed ${this.#troubleInARow} requests in a row (last: ${what}); check the network and the provider's status`,
        code,
      );
    }
  }

  /**
   * A request got a business answer: the provider is there. goingOn: the answer does not pause
   * sending again (an account-fatal one does), so sending has truly resumed (afterAnswer).
   */
  noteAnswer(goingOn = true): void {
    this.#troubleInARow = 0;
    this.#answered = true;
    if (!goingOn) return;
    this.outage = undefined;
    const resumed = this.#onGoingOn;
    this.#onGoingOn = undefined;
    resumed?.();
  }

  /**
   * `then` runs once, at the first answer that lets sending go on after resume(); a new pause
   * first drops it: a cooldown that finds the provider still down (or the account still refused)
   * never tells of a resumption.
   */
  afterAnswer(then: () => void): void {
    this.#onGoingOn = then;
  }

  /**
   * code: the pause's own; E_PROVIDER_UNREACHABLE once the provider has answered is an outage
   * (E_PROVIDER_FAILING), not a wrong address. statusCode: the provider's code that paused it, if
   * one did (read as such, never from the reason's text).
   */
  pause(reason: string, code: PauseCode, statusCode?: string): void {
    if (this.reason) return;
    this.#set(
      reason,
      code === 'E_PROVIDER_UNREACHABLE' && this.#answered ? 'E_PROVIDER_FAILING' : code,
      statusCode,
    );
    if (this.local) return; // NO_ANSWER; an answer's stop is the account's
    this.shared?.pause.pause({ reason, code: this.code!, statusCode }, this.shared.holdMs);
  }
  /** This node's pause alone (no answer from the provider), where other nodes share the account. */
  get local(): boolean {
    return this.shared !== undefined && !this.#joined && NO_ANSWER.includes(this.code ?? '');
  }
  /** The cooldown is over: sending is tried again, by every node. */
  resume(): void {
    this.#clear();
    this.shared?.pause.resume();
  }
  get paused(): boolean {
    return this.reason !== undefined;
  }

  #set(reason: string, code: PauseCode, statusCode: string | undefined): void {
    this.#onGoingOn = undefined;
    this.#joined = false;
    this.reason = reason;
    this.code = code;
    this.statusCode = statusCode;
    this.outage = { reason, code };
    this.since = new Date();
  }

  #clear(): void {
    this.reason = undefined;
    this.code = undefined;
    this.statusCode = undefined;
    this.since = undefined;
    this.#troubleInARow = 0;
  }
}
