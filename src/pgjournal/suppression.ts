// The suppression list in PostgreSQL (as journal/suppression.ts in SQLite): numbers never sent to
// again. One statement per call, so a list of any length is added or removed at once.
import type pg from 'pg';
import type { SuppressedNumber } from '../ports/records.js';
import type { SuppressionList } from '../ports/suppression.js';

/** A number already suppressed keeps its first reason; returns how many were new. */
async function add(
  pool: pg.Pool,
  phones: readonly string[],
  reason: string,
  source: string,
): Promise<number> {
  const { rowCount } = await pool.query(
    `INSERT INTO suppressed (phone, reason, source, added_at)
     SELECT DISTINCT phone, $2, $3, $4 FROM unnest($1::text[]) AS p(phone)
     ON CONFLICT (phone) DO NOTHING`,
    [[...phones], reason, source, new Date().toISOString()],
  );
  return rowCount ?? 0;
}

export function pgSuppressionList(pool: pg.Pool): SuppressionList {
  return {
    add: (phones, reason, source) => add(pool, phones, reason, source),
    remove: async (phones) =>
      (await pool.query('DELETE FROM suppressed WHERE phone = ANY($1::text[])', [[...phones]]))
        .rowCount ?? 0,
    // Byte order, as SQLite's, whatever the database's collation.
    list: async () =>
      (
        await pool.query<SuppressedNumber>(
          'SELECT phone, reason, source, added_at AS "addedAt" FROM suppressed ORDER BY added_at COLLATE "C", phone COLLATE "C"',
        )
      ).rows,
  };
}
