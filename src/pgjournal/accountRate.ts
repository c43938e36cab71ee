// The account's pacing in PostgreSQL (ports/account.ts): every node's request starts reserved
// against one row, so that requestsPerSecond, messagesPerSecond and the message window hold for
// all nodes together. A reservation is one statement, the function account_take_start of
// migration 10: under the row's lock it moves each per-second limit's next start on and, with a
// message window, records the start (a table of them, by the database's clock) and adds its
// numbers to the window's running sum, from which the starts that left the window are taken out
// (so that its cost does not grow with the window); as send/rate.ts does in memory for one
// process. The node then waits the time it was given, on its own clock.
import type pg from 'pg';
import type { AccountRate, ReservedStart, WindowFull } from '../ports/account.js';
import { withTransaction } from './smallTransaction.js';

const TAKE_START =
  'SELECT wait_ms, start_id, full_ms FROM account_take_start($1, $2, $3, $4, $5, $6)';

/** The journal's pacing, for the node `node`. */
export function pgAccountRate(pool: pg.Pool, node: string): AccountRate {
  return {
    async reserve(numbers, pacing) {
      const { rows } = await pool.query<{
        wait_ms: number;
        start_id: number | null;
        full_ms: number | null;
      }>(TAKE_START, [
        numbers,
        pacing.requestMs,
        pacing.messageMs,
        pacing.windowMs,
        pacing.windowMessages,
        node,
      ]);
      const row = rows[0]!;
      if (row.full_ms !== null) return { full: true, waitMs: row.full_ms } satisfies WindowFull;
      return reserved(pool, Math.max(0, row.wait_ms), row.start_id);
    },
    seedWindow: (starts, windowMs) => seedWindow(pool, node, starts, windowMs),
  };
}

function reserved(pool: pg.Pool, waitMs: number, startId: number | null): ReservedStart {
  let settled = startId === null;
  const once = (sql: string) => {
    if (settled) return;
    settled = true;
    // Not awaited: the request goes on. A write lost here leaves the start counted from its
    // reservation (a little early) or, given back, counted anyway (the safe side).
    pool.query(sql, [startId]).catch(() => undefined);
  };
  return {
    full: false,
    waitMs,
    started: () =>
      once(
        'UPDATE account_window_starts SET at = GREATEST(at, extract(epoch FROM clock_timestamp()) * 1000) WHERE id = $1',
      ),
    giveBack: () => once('SELECT account_give_back($1)'),
  };
}

/**
 * The journal's starts, in a window that holds none within `windowMs` yet (under the pacing row's
 * lock: of nodes starting at once, one seeds it). Their times are the nodes' clocks, which are
 * taken to be near the database's.
 */
async function seedWindow(
  pool: pg.Pool,
  node: string,
  starts: readonly { at: number; numbers: number }[],
  windowMs: number,
): Promise<void> {
  if (starts.length === 0) return;
  await withTransaction(pool, async (client) => {
    await client.query('SELECT 1 FROM account_pace WHERE id = 1 FOR UPDATE');
    await client.query(
      `WITH seeded AS (
       INSERT INTO account_window_starts (at, numbers, node)
       SELECT s.at, s.numbers, $3
       FROM unnest($1::double precision[], $2::integer[]) AS s(at, numbers)
       WHERE s.at > extract(epoch FROM clock_timestamp()) * 1000 - $4 AND NOT EXISTS (
         SELECT 1 FROM account_window_starts
         WHERE at > extract(epoch FROM clock_timestamp()) * 1000 - $4)
       RETURNING numbers)
     UPDATE account_pace SET window_used = window_used + (SELECT coalesce(sum(numbers), 0) FROM seeded)
     WHERE id = 1`,
      [starts.map((s) => s.at), starts.map((s) => s.numbers), node, windowMs],
    );
  });
}
