// The statements of the account's slots (accountSlots.ts), and its small waiting helpers.
import { PAUSE_COLUMNS, PAUSED_NOW } from './accountPause.js';
import { SLOT_CHANNEL } from './slotNotices.js';

/** Takes up to $5 free slots; says "want" (NOTIFY) when it took none. */
export const TAKE = `
  WITH lvl AS (SELECT level FROM account_level WHERE id = 1),
  free AS (
    SELECT s.slot FROM account_slots s, lvl
    WHERE s.slot < LEAST(lvl.level, $3) AND (s.holder IS NULL OR s.until < clock_timestamp())
      AND NOT ${PAUSED_NOW}
    ORDER BY s.slot LIMIT $5
    FOR UPDATE OF s SKIP LOCKED
  ),
  taken AS (
    UPDATE account_slots s
    SET holder = $1, node = $2, until = clock_timestamp() + $4 * interval '1 millisecond'
    FROM free WHERE s.slot = free.slot
    RETURNING s.slot
  )
  SELECT (SELECT level FROM lvl) AS level,
    (SELECT coalesce(array_agg(slot), '{}') FROM taken) AS slots,
    CASE WHEN NOT EXISTS (SELECT 1 FROM taken)
      THEN pg_notify('${SLOT_CHANNEL}', 'want ' || $2::text) END AS wanted,
    ${PAUSE_COLUMNS}
  FROM (SELECT 1) one LEFT JOIN account_pause ON account_pause.id = 1`;

/** Gives a slot back, and tells the waiting nodes (NOTIFY) if it was still this holder's. */
export const GIVE = `
  WITH freed AS (
    UPDATE account_slots SET holder = NULL, node = NULL, until = NULL
    WHERE slot = $1 AND holder = $2 RETURNING slot)
  SELECT pg_notify('${SLOT_CHANNEL}', 'free ' || $3::text) FROM freed`;

/** Extends the leases of slots still held ($1: holders); the account's level and pause. */
export const RENEW = `WITH renewed AS (
           UPDATE account_slots SET until = clock_timestamp() + $2 * interval '1 millisecond'
           WHERE holder = ANY($1) AND until > clock_timestamp() RETURNING slot, holder)
         SELECT level, (SELECT coalesce(array_agg(slot), '{}') FROM renewed) AS slots,
           ${PAUSE_COLUMNS} FROM account_level, account_pause
         WHERE account_level.id = 1 AND account_pause.id = 1`;

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
