// The account's request slots in PostgreSQL (ports/account.ts), with its pacing (accountRate.ts)
// and its pause (accountPause.ts): one row per slot, held by one node under a lease by the
// database's clock, renewed while the node lives. Slots are taken `FOR UPDATE SKIP LOCKED`, so
// nodes taking at once never wait for each other and never take the same slot.
//
// A node keeps the slots it holds as a block while its requests want them: an answered request's
// slot goes to the node's next waiting request with no statement (or waits LINGER_MS for one),
// and goes back to the database (with a NOTIFY that wakes the waiting nodes: slotNotices.ts) only
// when no request here wants it, when the level was lowered under it, or when other nodes want
// slots and this node holds more than its share (the level over the nodes wanting one, rounded
// up). A node that finds no slot says so in the same statement (a NOTIFY "want"), and looks again
// when a slot is freed, or at the latest every FALLBACK_POLL_MS.
//
// Why the limit holds across nodes, as the provider counts requests: the provider counts a
// request until it has answered it or dropped it, at most SMSDROP_PROVIDER_HOLD_MS (its own server
// timeout) after it arrived. A request starts only while its node surely holds its slot: within
// the lease of the slot's take or last renewal, on the node's own monotonic clock, counted from
// when that statement was sent (stillHeld, asked as the request is written). The database keeps
// the slot from other nodes for the lease *and the hold* after that statement, so a request
// started in time has been let go by the provider before its slot can pass, whatever becomes of
// its node (stopped dead, cut off from the database or the provider). A request that got no
// answer gives its slot back held for the hold; an answered one's slot is free for the next.
import type pg from 'pg';
import type { AccountRate, AccountSlots, SlotRelease } from '../ports/account.js';
import { type PauseRow, PgSharedPause } from './accountPause.js';
import { pgAccountRate } from './accountRate.js';
import { FREE, FREE_ALL, HOLD, napUntil, RENEW, signal, type SlotStats, TAKE } from './slotSql.js';
import { type SlotNotice, SlotNotices } from './slotNotices.js';

export interface AccountSlotOptions {
  /** The node's id (nodes.id). */
  node: string;
  /** How long a slot stays held without renewal (SMSDROP_LEASE). */
  leaseMs: number;
  /** The node's SMSDROP_CONCURRENCY: the account's limit, and this node never holds more. */
  concurrency: number;
  /** SMSDROP_PROVIDER_HOLD_MS: how long the provider may count a request with no answer. */
  holdMs: number;
  /** The longest wait before looking for a free slot again (default FALLBACK_POLL_MS). */
  fallbackPollMs?: number;
}

/** The longest wait before a node with waiting requests looks for a free slot again. */
const FALLBACK_POLL_MS = 100;
/** A node that said it wants a slot counts as wanting for this long. */
const WANT_HEARD_MS = 1_000;
/**
 * A slot is handed on within the node only this share of the lease after its take or last renewal
 * (renewals come every third of it): a request started on it has the rest of the lease before
 * stillHeld would stop it.
 */
const REUSE_SHARE = 1 / 2;
/**
 * How long a slot no request here waits for stays with the node: the sender's next request asks
 * for one a moment after an answer gives one back, and takes it with no statement.
 */
const LINGER_MS = 50;

/**
 * The account's slots for this node, on a migrated journal: the setting is recorded (the level
 * never above it) and the slots' rows made, then slots are taken and renewed.
 */
export async function openAccountSlots(
  pool: pg.Pool,
  options: AccountSlotOptions,
): Promise<PgAccountSlots> {
  const { concurrency } = options;
  await pool.query(
    `INSERT INTO account_level (id, level) VALUES (1, $1)
     ON CONFLICT (id) DO UPDATE SET level = LEAST(account_level.level, $1)`,
    [concurrency],
  );
  await pool.query(
    'INSERT INTO account_slots (slot) SELECT generate_series(0, $1 - 1) ON CONFLICT DO NOTHING',
    [concurrency],
  );
  const slots = new PgAccountSlots(pool, options);
  await slots.listen();
  return slots;
}

/** A slot this node holds: its holder (one per take) and how long it is surely this node's. */
interface Held {
  holder: string;
  /** performance.now() before the statement that took or last renewed it was sent. */
  confirmedAt: number;
}

interface Waiter {
  resolve: (release: SlotRelease | undefined) => void;
  reject: (error: unknown) => void;
  signal: AbortSignal | undefined;
}

type TakeRow = PauseRow & { level: number; slots: number[] };
type Wake = 'notice' | 'here';

export class PgAccountSlots implements AccountSlots {
  readonly #pool: pg.Pool;
  readonly #options: AccountSlotOptions;
  readonly #held = new Map<number, Held>();
  readonly #waiters: Waiter[] = [];
  /** Held slots no request uses, each with the timer that gives it back. */
  readonly #idle = new Map<number, NodeJS.Timeout>();
  /** Other nodes that said they want a slot, with when this node heard it. */
  readonly #wanting = new Map<string, number>();
  readonly #notices: SlotNotices;
  readonly #stats: SlotStats = {
    taken: 0,
    handedOn: 0,
    givenBack: 0,
    wokenByNotice: 0,
    wokenHere: 0,
    wokenByPoll: 0,
    wantsHeard: 0,
  };
  #takes = 0;
  #level: number;
  #pumping = false;
  /** Ends the pump's wait early: a slot was freed (here, or by a node that said so). */
  #freed = signal<Wake>();
  readonly #renewal: NodeJS.Timeout;
  #closed = false;
  readonly rate: AccountRate;
  readonly pause: PgSharedPause;

  constructor(pool: pg.Pool, options: AccountSlotOptions) {
    this.#pool = pool;
    this.#options = options;
    this.rate = pgAccountRate(pool, options.node);
    this.pause = new PgSharedPause(pool, options.node);
    this.#level = options.concurrency;
    this.#notices = new SlotNotices(pool, (notice) => this.#heard(notice));
    this.#renewal = setInterval(() => void this.#renew(), Math.max(50, options.leaseMs / 3));
    this.#renewal.unref();
  }

  /** Opens the listening connection (a node that cannot listen still finds slots by looking). */
  listen(): Promise<void> {
    return this.#notices.ensureListening();
  }

  /** How the waits for slots ended so far. */
  get stats(): Readonly<SlotStats> {
    return { ...this.#stats };
  }

  get concurrency(): number {
    return this.#level;
  }

  set concurrency(level: number) {
    this.#level = Math.min(this.#options.concurrency, Math.max(1, Math.floor(level)));
    this.#pool
      .query('UPDATE account_level SET level = $1 WHERE id = 1', [this.#level])
      .catch(() => undefined); // read back at the next renewal; the slots' leases still hold
  }

  take(signal?: AbortSignal): Promise<SlotRelease | undefined> {
    if (signal?.aborted || this.#closed || this.pause.inPause) return Promise.resolve(undefined);
    const idle = this.#idleSlot();
    if (idle !== undefined) {
      this.#stats.handedOn++;
      return Promise.resolve(this.#release(idle));
    }
    return new Promise((resolve, reject) => {
      this.#waiters.push({ resolve, reject, signal });
      void this.#pump();
    });
  }

  async close(): Promise<void> {
    this.#closed = true;
    clearInterval(this.#renewal);
    this.pause.close();
    this.#wakePump('here');
    for (const waiter of this.#waiters.splice(0)) waiter.resolve(undefined);
    for (const timer of this.#idle.values()) clearTimeout(timer);
    this.#idle.clear();
    // Its requests have ended (the sender waits for them before the journal closes): answered
    // or not, each slot gave itself back; a slot left here is freed as its own give would.
    const holders = [...new Set([...this.#held.values()].map((h) => h.holder))];
    this.#held.clear();
    await this.#notices.close();
    if (holders.length > 0) await this.#pool.query(FREE_ALL, [holders]).catch(() => undefined);
  }

  /** Takes slots for the waiting requests until none waits; one pump at a time. */
  async #pump(): Promise<void> {
    if (this.#pumping) return;
    this.#pumping = true;
    try {
      while (this.#stillWaiting() > 0) {
        const wake = this.#freed.promise;
        const row = await this.#takeSome();
        if (row.slots.length > 0) continue;
        // No slot while the account is paused: the requests do not start once this node knows
        // it (its sender then stops); until it does, they wait as for a full account.
        this.pause.observe(row);
        if (row.pause_active && this.pause.inPause) {
          for (const waiter of this.#waiters.splice(0)) waiter.resolve(undefined);
          break;
        }
        const fallback = this.#options.fallbackPollMs ?? FALLBACK_POLL_MS;
        this.#countWake(await napUntil(fallback, wake));
      }
    } catch (error) {
      for (const waiter of this.#waiters.splice(0)) waiter.reject(error);
    } finally {
      this.#pumping = false;
    }
  }

  /** Waiting requests whose stop has not come (the stopped ones are told undefined). */
  #stillWaiting(): number {
    for (let i = this.#waiters.length - 1; i >= 0; i--) {
      const waiter = this.#waiters[i]!;
      if (this.#closed || waiter.signal?.aborted) {
        this.#waiters.splice(i, 1);
        waiter.resolve(undefined);
      }
    }
    return this.#waiters.length;
  }

  /** One statement: as many slots as wait here, within this node's share; hands them out. */
  async #takeSome(): Promise<TakeRow> {
    const wanted = Math.max(0, Math.min(this.#waiters.length, this.#share() - this.#held.size));
    const holder = `${this.#options.node}#${++this.#takes}`;
    const { leaseMs, holdMs, node, concurrency } = this.#options;
    const sentAt = performance.now();
    void this.#notices.ensureListening();
    const { rows } = await this.#pool.query<TakeRow>(TAKE, [
      holder,
      node,
      concurrency,
      leaseMs + holdMs,
      wanted,
    ]);
    const row = rows[0]!;
    this.#level = row.level;
    for (const slot of row.slots) {
      this.#stats.taken++;
      this.#held.set(slot, { holder, confirmedAt: sentAt });
      const waiter = this.#waiters.shift();
      if (waiter) waiter.resolve(this.#release(slot));
      else this.#unused(slot);
    }
    return row;
  }

  /** The slots this node may hold: the level, shared with the other nodes that want slots. */
  #share(): number {
    const now = performance.now();
    for (const [node, heardAt] of this.#wanting)
      if (now - heardAt > WANT_HEARD_MS) this.#wanting.delete(node);
    return Math.ceil(this.#level / (1 + this.#wanting.size));
  }

  /** A request's hold on `slot`: surely its own for a lease from its take or last renewal. */
  #release(slot: number): SlotRelease {
    const held = this.#held.get(slot)!;
    let given = false;
    const release = (ended: 'answered' | 'unanswered' = 'answered') => {
      if (given) return;
      given = true;
      if (this.#held.get(slot) !== held) return;
      if (ended === 'unanswered') this.#giveBack(slot, 'hold');
      else this.#unused(slot);
    };
    const stillHeld = () =>
      this.#held.get(slot) === held && performance.now() < held.confirmedAt + this.#options.leaseMs;
    return Object.assign(release, { stillHeld });
  }

  /**
   * A slot no request uses (an answer came, or a take brought more than wait): to the next request
   * waiting here, else kept a moment for the next one to ask, else back to the database.
   */
  #unused(slot: number): void {
    const held = this.#held.get(slot);
    if (!held) return;
    if (!this.#mayReuse(slot, held)) return this.#giveBack(slot, 'free');
    if (this.#stillWaiting() > 0) {
      this.#stats.handedOn++;
      this.#waiters.shift()!.resolve(this.#release(slot));
      return;
    }
    const timer = setTimeout(() => {
      if (this.#idle.get(slot) !== timer) return;
      this.#idle.delete(slot);
      this.#giveBack(slot, 'free');
    }, LINGER_MS);
    timer.unref();
    this.#idle.set(slot, timer);
  }

  /**
   * Reused only within REUSE_SHARE of the lease from its take or last renewal, under the level,
   * while this node holds no more than its share and knows of no pause.
   */
  #mayReuse(slot: number, held: Held): boolean {
    return (
      !this.#closed &&
      !this.pause.inPause &&
      performance.now() - held.confirmedAt < this.#options.leaseMs * REUSE_SHARE &&
      slot < this.#level &&
      this.#held.size <= this.#share()
    );
  }

  /** A held slot no request uses and that may be reused, taken out of the idle ones. */
  #idleSlot(): number | undefined {
    for (const [slot, timer] of this.#idle) {
      clearTimeout(timer);
      this.#idle.delete(slot);
      const held = this.#held.get(slot);
      if (held && this.#mayReuse(slot, held)) return slot;
      this.#giveBack(slot, 'free');
    }
    return undefined;
  }

  /** Other nodes want slots: the idle ones above this node's share go back at once. */
  #trimIdle(): void {
    for (const [slot, timer] of this.#idle) {
      if (this.#held.size <= this.#share()) return;
      clearTimeout(timer);
      this.#idle.delete(slot);
      this.#giveBack(slot, 'free');
    }
  }

  /** Back to the database: free at once, or (its request unanswered) held for the hold. */
  #giveBack(slot: number, how: 'free' | 'hold'): void {
    const held = this.#held.get(slot);
    if (!held) return;
    this.#held.delete(slot);
    this.#stats.givenBack++;
    const { node, holdMs } = this.#options;
    const [sql, values] =
      how === 'free' ? [FREE, [slot, held.holder, node]] : [HOLD, [slot, held.holder, holdMs]];
    this.#pool
      .query(sql, values)
      .then(() => this.#wakePump('here'))
      .catch(() => undefined); // its lease passes instead
  }

  #heard(notice: SlotNotice): void {
    if (notice.node === this.#options.node) return;
    if (notice.kind === 'pause') void this.#renew();
    else if (notice.kind === 'want') {
      this.#stats.wantsHeard++;
      this.#wanting.set(notice.node, performance.now());
      this.#trimIdle();
    } else this.#wakePump('notice');
  }

  #wakePump(why: Wake): void {
    const freed = this.#freed;
    this.#freed = signal();
    freed.resolve(why);
  }

  #countWake(why: Wake | 'poll'): void {
    if (why === 'notice') this.#stats.wokenByNotice++;
    else if (why === 'here') this.#stats.wokenHere++;
    else this.#stats.wokenByPoll++;
  }

  /** Extends the leases of the slots still held, and reads the account's level and pause back. */
  async #renew(): Promise<void> {
    const holders = [...new Set([...this.#held.values()].map((h) => h.holder))];
    const { leaseMs, holdMs } = this.#options;
    const sentAt = performance.now();
    try {
      const { rows } = await this.#pool.query<PauseRow & { level: number; renewed: string[] }>(
        RENEW,
        [holders, leaseMs + holdMs],
      );
      for (const renewed of rows[0]?.renewed ?? []) {
        const space = renewed.indexOf(' ');
        const held = this.#held.get(Number(renewed.slice(0, space)));
        if (held?.holder === renewed.slice(space + 1))
          held.confirmedAt = Math.max(held.confirmedAt, sentAt);
      }
      if (rows[0]) this.#level = rows[0].level;
      this.pause.observe(rows[0]);
    } catch {
      // The next renewal tries again; a slot not renewed in time starts no more requests here.
    }
  }
}
