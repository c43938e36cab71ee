// The account's request slots in PostgreSQL (ports/account.ts), with its pacing (accountRate.ts)
// and its pause (accountPause.ts): one row per slot, held by one request of one node under a
// lease by the database's clock, renewed while the node lives. A slot is taken `FOR UPDATE SKIP
// LOCKED`, so nodes taking at once never wait for each other and never take the same slot; a dead
// node's slots come back when their leases pass.
//
// Why the limit holds across nodes: a request starts only while its node holds a slot, and a slot
// has one holder at a time. A node that cannot renew (cut off from the database) keeps its
// requests in flight, and their slots may pass to others after the lease: the lease (30 s by
// default) is longer than a request may last (SMSDROP_TIMEOUT), so a request started before the
// last renewal that succeeded has ended before its slot can pass (docs/postgres.md).
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
}

/** How long to wait before looking again for a free slot: doubling, at most this. */
const MAX_POLL_MS = 100;

const TAKE = `
  WITH lvl AS (SELECT level FROM account_level WHERE id = 1),
  free AS (
    SELECT s.slot FROM account_slots s, lvl
    WHERE s.slot < LEAST(lvl.level, $3) AND (s.holder IS NULL OR s.until < clock_timestamp())
      AND NOT ${PAUSED_NOW}
    ORDER BY s.slot LIMIT 1
    FOR UPDATE OF s SKIP LOCKED
  ),
  taken AS (
    UPDATE account_slots s
    SET holder = $1, node = $2, until = clock_timestamp() + $4 * interval '1 millisecond'
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

class PgAccountSlots implements AccountSlots {
  readonly #pool: pg.Pool;
  readonly #options: AccountSlotOptions;
  /** The holders (one per take) of the slots this node holds, by slot. */
  readonly #held = new Map<number, string>();
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
      const { rows } = await this.#pool.query<PauseRow & { level: number; slot: number | null }>(
        TAKE,
        [holder, this.#options.node, this.#options.concurrency, this.#options.leaseMs],
      );
      this.#level = rows[0]!.level;
      const slot = rows[0]!.slot;
      if (slot !== null) {
        this.#held.set(slot, holder);
        return once(() => this.#give(slot, holder));
      }
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
    const holders = [...this.#held.values()];
    this.#held.clear();
    if (holders.length > 0)
      await this.#pool
        .query(
          'UPDATE account_slots SET holder = NULL, node = NULL, until = NULL WHERE holder = ANY($1)',
          [holders],
        )
        .catch(() => undefined);
  }

  #give(slot: number, holder: string): void {
    if (this.#held.get(slot) === holder) this.#held.delete(slot);
    this.#pool
      .query(
        'UPDATE account_slots SET holder = NULL, node = NULL, until = NULL WHERE slot = $1 AND holder = $2',
        [slot, holder],
      )
      .then(() => {
        const freed = this.#freed;
        this.#freed = signal();
        freed.resolve();
      })
      .catch(() => undefined); // its lease passes instead
  }

  /** Extends the leases of the slots still held, and reads the account's level and pause back. */
  async #renew(): Promise<void> {
    const holders = [...this.#held.values()];
    try {
      const { rows } = await this.#pool.query<PauseRow & { level: number }>(
        `WITH renewed AS (
           UPDATE account_slots SET until = clock_timestamp() + $2 * interval '1 millisecond'
           WHERE holder = ANY($1) AND until > clock_timestamp() RETURNING slot)
         SELECT level, ${PAUSE_COLUMNS} FROM account_level, account_pause
         WHERE account_level.id = 1 AND account_pause.id = 1`,
        [holders, this.#options.leaseMs],
      );
      if (rows[0]) this.#level = rows[0].level;
      this.pause.observe(rows[0]);
    } catch {
      // The next renewal tries again; a slot whose lease passes meanwhile goes to another node.
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

function once(give: () => void): SlotRelease {
  let given = false;
  return () => {
    if (given) return;
    given = true;
    give();
  };
}

/** A promise and what resolves it (Promise.withResolvers is not in Node 20). */
function signal(): { promise: Promise<void>; resolve: () => void } {
  let resolve!: () => void;
  const promise = new Promise<void>((r) => (resolve = r));
  return { promise, resolve };
}
