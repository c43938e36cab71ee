// The account's slots' statements (accountSlots.ts), their counts and their waiting helpers. A
// slot taken or renewed is kept from other nodes for a lease *and* the provider's hold after the
// statement; a slot given back after a request with no answer stays no one's for the hold.
import { PAUSE_COLUMNS, PAUSED_NOW } from './accountPause.js';
import { SLOT_CHANNEL } from './slotNotices.js';

/**
 * Takes up to $5 free slots for holder $1 of node $2 (the node's setting $3 caps the level), each
 * kept $4 ms (a lease and a hold); says "want" (NOTIFY) when it took none.
 */
export const TAKE = `
  WITH lvl AS (SELECT level FROM account_level WHERE id = 1),
  free AS (
    SELECT s.slot FROM account_slots s, lvl
    WHERE s.slot < LEAST(lvl.level, $3) AND (s.holder IS NULL OR s.until < clock_timestamp())
      AND (s.hold_until IS NULL OR s.hold_until < clock_timestamp()) AND NOT ${PAUSED_NOW}
    ORDER BY s.slot LIMIT $5
    FOR UPDATE OF s SKIP LOCKED
  ),
  taken AS (
    UPDATE account_slots s
    SET holder = $1, node = $2, until = clock_timestamp() + $4 * interval '1 millisecond',
      hold_until = NULL
    FROM free WHERE s.slot = free.slot
    RETURNING s.slot
  )
  SELECT (SELECT level FROM lvl) AS level,
    (SELECT coalesce(array_agg(slot), '{}') FROM taken) AS slots,
    CASE WHEN NOT EXISTS (SELECT 1 FROM taken)
      THEN pg_notify('${SLOT_CHANNEL}', 'want ' || $2::text) END AS wanted,
    ${PAUSE_COLUMNS}
  FROM (SELECT 1) one LEFT JOIN account_pause ON account_pause.id = 1`;

/** Slot $1 of holder $2 free at once, the waiting nodes told (NOTIFY, from node $3). */
export const FREE = `
  WITH freed AS (
    UPDATE account_slots SET holder = NULL, node = NULL, until = NULL, hold_until = NULL
    WHERE slot = $1 AND holder = $2 RETURNING slot)
  SELECT pg_notify('${SLOT_CHANNEL}', 'free ' || $3::text) FROM freed`;

/** Slot $1 of holder $2, whose request got no answer: no one's for the hold ($3 ms). */
export const HOLD = `UPDATE account_slots SET holder = NULL, node = NULL, until = NULL,
  hold_until = clock_timestamp() + $3 * interval '1 millisecond'
  WHERE slot = $1 AND holder = $2`;

/** Every slot of holders $1 free at once (the node closes, its requests ended). */
export const FREE_ALL = `UPDATE account_slots
  SET holder = NULL, node = NULL, until = NULL, hold_until = NULL WHERE holder = ANY($1)`;

/**
 * Keeps the slots of holders $1 for $2 ms more (never less than they had), those whose keep has
 * not passed; the slots renewed, the account's level and pause.
 */
export const RENEW = `WITH renewed AS (
    UPDATE account_slots
    SET until = GREATEST(until, clock_timestamp() + $2 * interval '1 millisecond')
    WHERE holder = ANY($1) AND until > clock_timestamp() RETURNING slot, holder)
  SELECT level, ARRAY(SELECT slot || ' ' || holder FROM renewed) AS renewed, ${PAUSE_COLUMNS}
  FROM account_level, account_pause WHERE account_level.id = 1 AND account_pause.id = 1`;

/**
 * Waits `ms`, or less once `freed` resolves, its timer gone with the wait: what ended it. It does
 * not listen on the stop signals: the node's is as long-lived as the process, and the waiting
 * requests are many while a dead node's slots are held (a listener each would be a leak Node
 * warns of); the pump sees a stop when it looks again (accountSlots.ts: FALLBACK_POLL_MS).
 */
export async function napUntil<T>(ms: number, freed: Promise<T>): Promise<T | 'poll'> {
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([
      new Promise<'poll'>((resolve) => (timer = setTimeout(() => resolve('poll'), ms))),
      freed,
    ]);
  } finally {
    clearTimeout(timer);
  }
}

/** A promise and what resolves it (Promise.withResolvers is not in Node 20). */
export function signal<T = void>(): { promise: Promise<T>; resolve: (value: T) => void } {
  let resolve!: (value: T) => void;
  const promise = new Promise<T>((r) => (resolve = r));
  return { promise, resolve };
}

/** How the node's slots were come by and given back, counted (for tests and the bench). */
export interface SlotStats {
  /** Slots taken from the database. */
  taken: number;
  /** Slots handed from an answered request to the next one here, with no statement. */
  handedOn: number;
  /** Slots given back to the database. */
  givenBack: number;
  /** Waits ended by another node's NOTIFY that it freed a slot. */
  wokenByNotice: number;
  /** Waits ended by this node giving a slot back. */
  wokenHere: number;
  /** Waits that ended at the fallback poll's time. */
  wokenByPoll: number;
  /** Other nodes' NOTIFY that they want a slot. */
  wantsHeard: number;
}
