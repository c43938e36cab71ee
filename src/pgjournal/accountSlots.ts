// The account's request slots in PostgreSQL (ports/account.ts), with its pacing (accountRate.ts)
// and its pause (accountPause.ts): one row per slot, held by one request of one node under a
// lease by the database's clock, renewed while the node lives. A slot is taken `FOR UPDATE SKIP
// LOCKED`, so nodes taking at once never wait for each other and never take the same slot; a dead
// node's slots come back when their leases pass.
//
// Why the limit holds across nodes, as the provider counts requests: the provider counts a
// request until it has answered it or dropped it, at most SMSDROP_PROVIDER_HOLD_MS (its own server
// timeout) after it arrived. A request starts only while its node surely holds its slot: within
// the lease of the slot's take or last renewal, on the node's own monotonic clock, counted from
// when that statement was sent (stillHeld, asked as the request is written). The database keeps
// the slot from other nodes for the lease *and the hold* after that statement, so a request
// started in time has been let go by the provider before its slot can pass, whatever becomes of
// its node (stopped dead, cut off from the database or the provider). A request that got no
// answer gives its slot back held for the hold; an answered one frees it at once.
import type pg from 'pg';
import type { AccountRate, AccountSlots, SlotRelease } from '../ports/account.js';
import { PAUSE_COLUMNS, PAUSED_NOW, type PauseRow, PgSharedPause } from './accountPause.js';
import { pgAccountRate } from './accountRate.js';

export interface AccountSlotOptions {
  /** The node's id (nodes.id). */
  node: string;
  /** How long a slot stays held without renewal (SMSDROP_LEASE). */
  leaseMs: number;
  /** The node's SMSDROP_CONCURRENCY: the account's limit, and this node never holds more. */
  concurrency: number;
  /** SMSDROP_PROVIDER_HOLD_MS: how long the provider may count a request with no answer. */
  holdMs: number;
}

/** How long to wait before looking again for a free slot: doubling, at most this. */
const MAX_POLL_MS = 100;

const TAKE = `
  WITH lvl AS (SELECT level FROM account_level WHERE id = 1),
  free AS (
    SELECT s.slot FROM account_slots s, lvl
    WHERE s.slot < LEAST(lvl.level, $3) AND (s.holder IS NULL OR s.until < clock_timestamp())
      AND (s.hold_until IS NULL OR s.hold_until < clock_timestamp()) AND NOT ${PAUSED_NOW}
    ORDER BY s.slot LIMIT 1
    FOR UPDATE OF s SKIP LOCKED
  ),
  taken AS (
    UPDATE account_slots s
    SET holder = $1, node = $2, until = clock_timestamp() + $4 * interval '1 millisecond',
      hold_until = NULL
    FROM free WHERE s.slot = free.slot
    RETURNING s.slot
  )
  SELECT (SELECT level FROM lvl) AS level, (SELECT slot FROM taken) AS slot, ${PAUSE_COLUMNS}
  FROM (SELECT 1) one LEFT JOIN account_pause ON account_pause.id = 1`;

/**
 * The account's slots for this node, on a migrated journal: the setting is recorded (the level
 * never above it) and the slots' rows made, then slots are taken and renewed.
 */
export async function openAccountSlots(
  pool: pg.Pool,
  options: AccountSlotOptions,
): Promise<AccountSlots> {
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
  return new PgAccountSlots(pool, options);
}

/** A slot's request answered: free at once. */
const FREE = 'UPDATE account_slots SET holder = NULL, node = NULL, until = NULL, hold_until = NULL';
/** A slot's request unanswered: no holder, but no other request's until the provider let it go. */
const HOLD = `UPDATE account_slots SET holder = NULL, node = NULL, until = NULL,
  hold_until = clock_timestamp() + $3 * interval '1 millisecond'`;

class PgAccountSlots implements AccountSlots {
  readonly #pool: pg.Pool;
  readonly #options: AccountSlotOptions;
  /** The slots this node holds: their holder (one per take), and how long surely theirs. */
  readonly #held = new Map<number, HeldSlot>();
  #takes = 0;
  #level: number;
  /** Resolves waiting takes early when this node gives a slot back. */
  #freed = signal();
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
    this.#renewal = setInterval(() => void this.#renew(), Math.max(50, options.leaseMs / 3));
    this.#renewal.unref();
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

  async take(signal?: AbortSignal): Promise<SlotRelease | undefined> {
    for (
      let waitMs = 2;
      !signal?.aborted && !this.#closed;
      waitMs = Math.min(2 * waitMs, MAX_POLL_MS)
    ) {
      const holder = `${this.#options.node}#${++this.#takes}`;
      const { leaseMs, holdMs, node, concurrency } = this.#options;
      const asked = performance.now();
      const { rows } = await this.#pool.query<PauseRow & { level: number; slot: number | null }>(
        TAKE,
        [holder, node, concurrency, leaseMs + holdMs],
      );
      this.#level = rows[0]!.level;
      const slot = rows[0]!.slot;
      if (slot !== null) return this.#took(slot, holder, asked);
      // No slot while the account is paused: the request does not start once this node knows it
      // (its sender then stops); until it does, the take waits as for a full account.
      this.pause.observe(rows[0]);
      if (rows[0]!.pause_active && this.pause.inPause) return undefined;
      await napUntil(waitMs, this.#freed.promise);
    }
    return undefined;
  }

  async close(): Promise<void> {
    this.#closed = true;
    clearInterval(this.#renewal);
    this.pause.close();
    // Its requests have ended (the sender waits for them before the journal closes): answered
    // or not, each slot gave itself back; a slot left here is freed as its own give would.
    const holders = [...this.#held.values()].map((held) => held.holder);
    this.#held.clear();
    if (holders.length > 0)
      await this.#pool.query(`${FREE} WHERE holder = ANY($1)`, [holders]).catch(() => undefined);
  }

  /**
   * The slot just taken: a request may start on it for a lease from when the take was asked (the
   * database's `until` is a lease and a hold from later than that).
   */
  #took(slot: number, holder: string, asked: number): SlotRelease {
    const held: HeldSlot = { holder, surelyUntil: asked + this.#options.leaseMs };
    this.#held.set(slot, held);
    let given = false;
    const release = (ended: 'answered' | 'unanswered' = 'answered') => {
      if (given) return;
      given = true;
      this.#give(slot, holder, ended);
    };
    return Object.assign(release, { stillHeld: () => performance.now() < held.surelyUntil });
  }

  #give(slot: number, holder: string, ended: 'answered' | 'unanswered'): void {
    if (this.#held.get(slot)?.holder === holder) this.#held.delete(slot);
    const [sql, values] =
      ended === 'answered' ? [FREE, [slot, holder]] : [HOLD, [slot, holder, this.#options.holdMs]];
    this.#pool
      .query(`${sql} WHERE slot = $1 AND holder = $2`, values)
      .then(() => {
        const freed = this.#freed;
        this.#freed = signal();
        freed.resolve();
      })
      .catch(() => undefined); // its lease passes instead
  }

  /** Extends the leases of the slots still held, and reads the account's level and pause back. */
  async #renew(): Promise<void> {
    const held = [...this.#held.values()];
    const { leaseMs, holdMs } = this.#options;
    const asked = performance.now();
    try {
      const { rows } = await this.#pool.query<PauseRow & { level: number; renewed: string[] }>(
        `WITH renewed AS (
           UPDATE account_slots
           SET until = GREATEST(until, clock_timestamp() + $2 * interval '1 millisecond')
           WHERE holder = ANY($1) AND until > clock_timestamp() RETURNING holder)
         SELECT level, ${PAUSE_COLUMNS}, ARRAY(SELECT holder FROM renewed) AS renewed
         FROM account_level, account_pause
         WHERE account_level.id = 1 AND account_pause.id = 1`,
        [held.map((h) => h.holder), leaseMs + holdMs],
      );
      const renewed = new Set(rows[0]?.renewed);
      for (const h of held)
        if (renewed.has(h.holder)) h.surelyUntil = Math.max(h.surelyUntil, asked + leaseMs);
      if (rows[0]) this.#level = rows[0].level;
      this.pause.observe(rows[0]);
    } catch {
      // The next renewal tries again; a slot not renewed in time starts no more requests here.
    }
  }
}

/**
 * Waits `ms`, or less once `freed` resolves, its timer gone with the wait. It does not listen on
 * the stop signal: that is the node's, as long-lived as the process, and the waiting requests are
 * many while a dead node's slots are held (a listener each would be a leak Node warns of); the
 * take sees the stop when it looks again, within MAX_POLL_MS.
 */
async function napUntil(ms: number, freed: Promise<void>): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  try {
    await Promise.race([new Promise<void>((resolve) => (timer = setTimeout(resolve, ms))), freed]);
  } finally {
    clearTimeout(timer);
  }
}

interface HeldSlot {
  holder: string;
  /** performance.now() until which a request may start on the slot (a take's or renewal's). */
  surelyUntil: number;
}

/** A promise and what resolves it (Promise.withResolvers is not in Node 20). */
function signal(): { promise: Promise<void>; resolve: () => void } {
  let resolve!: () => void;
  const promise = new Promise<void>((r) => (resolve = r));
  return { promise, resolve };
}
