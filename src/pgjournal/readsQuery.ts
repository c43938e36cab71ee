// How the PostgreSQL ReadStore asks: one statement, its rows as objects (or the first row, or one
// value), and pages of rows by keyset (an id after the last one handed over), so that a file's
// rows are never one array, and no statement or cursor stays open between pages.
import type { Queryable } from './claims.js';

export type { Queryable };

/** Text sorted as SQLite sorts it (by bytes), whatever the database's locale. */
export const BYTES = 'COLLATE "C"';

export async function all<T>(db: Queryable, text: string, params: unknown[] = []): Promise<T[]> {
  const { rows } = await db.query(text, params);
  return rows as T[];
}

export async function first<T>(
  db: Queryable,
  text: string,
  params: unknown[] = [],
): Promise<T | undefined> {
  return (await all<T>(db, text, params))[0];
}

/** The first column of the first row (undefined: no row). */
export async function value<T>(
  db: Queryable,
  text: string,
  params: unknown[] = [],
): Promise<T | undefined> {
  const { rows } = await db.query({ text, values: params, rowMode: 'array' });
  return (rows as unknown[][])[0]?.[0] as T | undefined;
}

/**
 * Rows a page at a time by their `key` (a column the statement returns and orders by, ascending):
 * `text` takes the key to start after as its last parameter but one and the page size as its last.
 * The key is left out of the rows handed over.
 */
export async function* keysetPages<T>(
  db: Queryable,
  text: string,
  params: unknown[],
  key: string,
  size: number,
): AsyncGenerator<T[]> {
  for (let after = 0; ;) {
    const rows = await all<Record<string, unknown>>(db, text, [...params, after, size]);
    if (rows.length === 0) return;
    after = rows[rows.length - 1]![key] as number;
    yield rows.map(({ [key]: _key, ...rest }) => rest as T);
    if (rows.length < size) return;
  }
}
