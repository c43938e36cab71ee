// Transactions of the PostgreSQL journal's stores: a client of the pool, BEGIN, the work, COMMIT,
// or ROLLBACK on any error (the error is thrown on). For the stores written with the handle
// (outbox, suppression list, daemon state, retry, maintenance), and for migrate's copy (copy.ts).
import type pg from 'pg';
import type { Queryable } from './claims.js';

/** A pool or one of its clients (inside a transaction). */
export type { Queryable };

/** Runs `work` in a transaction on a client of `pool`; its value once committed. */
export async function withTransaction<T>(
  pool: pg.Pool,
  work: (client: pg.PoolClient) => Promise<T>,
): Promise<T> {
  const client = await pool.connect();
  // A client whose ROLLBACK failed (its connection broke) is ended, not given back to the pool.
  let broken: Error | undefined;
  try {
    await client.query('BEGIN');
    const value = await work(client);
    await client.query('COMMIT');
    return value;
  } catch (error) {
    await client.query('ROLLBACK').catch((rollback: Error) => {
      broken = rollback;
    });
    throw error;
  } finally {
    client.release(broken);
  }
}
