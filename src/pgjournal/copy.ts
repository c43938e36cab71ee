// Moving up: an SQLite journal copied into an empty PostgreSQL one, every table with
// its ids, in one transaction, so that the PostgreSQL journal is the SQLite one or nothing.
//
// The SQLite side is read a page at a time (journal/tableDump.ts), and each page goes in as one
// INSERT … SELECT FROM unnest(one array per column): a million rows copy in flat memory and in a
// few thousand statements. Ids are copied as they are (the identities are BY DEFAULT) and each
// sequence is then set past the highest, so that the next row PostgreSQL makes gets a new id.
// The tables are locked first: nothing else writes them while they are checked empty and filled.
import type pg from 'pg';
import { SmsdropError } from '../errors.js';
import type { CopyCounts, DumpedRow, DumpedTable, TableDump } from '../ports/tableDump.js';
import { migratePostgres, openPool } from './schema.js';
import { withTransaction } from './smallTransaction.js';

/** Rows per INSERT: one array parameter per column, however many rows. */
const PAGE_ROWS = 5000;

export interface CopyOptions {
  /** Told after each page: the table, and its rows copied so far. */
  onProgress?: (table: string, copied: number, of: number) => void;
  pageRows?: number;
}

/**
 * Copies every table of `dump` into the PostgreSQL journal of `pool` (its schema migrated:
 * migratePostgres), which must hold no row yet: E_MIGRATE_TARGET_NOT_EMPTY otherwise, and nothing
 * is written.
 */
export async function copyJournal(
  dump: TableDump,
  pool: pg.Pool,
  options: CopyOptions = {},
): Promise<CopyCounts> {
  const tables = dump.tables();
  return withTransaction(pool, async (client) => {
    await client.query(
      `LOCK TABLE ${tables.map((t) => t.name).join(', ')} IN SHARE ROW EXCLUSIVE MODE`,
    );
    await refuseNonEmpty(client, tables);
    const counts: CopyCounts = [];
    for (const table of tables) {
      const rows = await copyTable(client, table, options);
      counts.push({ table: table.name, rows });
    }
    await setSequencesPastIds(client);
    return counts;
  });
}

async function refuseNonEmpty(client: pg.PoolClient, tables: DumpedTable[]): Promise<void> {
  const held: string[] = [];
  for (const { name } of [...tables, { name: 'nodes' }]) {
    const { rows } = await client.query<{ any: boolean }>(
      `SELECT EXISTS (SELECT 1 FROM ${name}) AS any`,
    );
    if (rows[0]!.any) held.push(name);
  }
  if (held.length > 0)
    throw new SmsdropError(
      'E_MIGRATE_TARGET_NOT_EMPTY',
      `the PostgreSQL journal is not empty (rows in ${held.join(', ')}): copy into a new, empty database`,
    );
}

/** The PostgreSQL type of each column of `table` (format_type: 'bigint', 'text', …). */
async function columnTypes(client: pg.PoolClient, table: string): Promise<Map<string, string>> {
  const { rows } = await client.query<{ name: string; type: string }>(
    `SELECT attname AS name, format_type(atttypid, atttypmod) AS type FROM pg_attribute
     WHERE attrelid = $1::regclass AND attnum > 0 AND NOT attisdropped`,
    [table],
  );
  return new Map(rows.map((r) => [r.name, r.type]));
}

async function copyTable(
  client: pg.PoolClient,
  table: DumpedTable,
  options: CopyOptions,
): Promise<number> {
  const types = await columnTypes(client, table.name);
  const missing = table.columns.filter((c) => !types.has(c));
  if (missing.length > 0)
    throw new SmsdropError(
      'E_INTERNAL',
      `the PostgreSQL journal's ${table.name} has no column ${missing.join(', ')}`,
    );
  const insert = `INSERT INTO ${table.name} (${table.columns.map((c) => `"${c}"`).join(', ')})
    SELECT * FROM unnest(${table.columns.map((c, i) => `$${i + 1}::${types.get(c)}[]`).join(', ')})`;
  let copied = 0;
  for (const page of table.pages(options.pageRows ?? PAGE_ROWS)) {
    await client.query(insert, byColumn(page, table.columns.length));
    copied += page.length;
    options.onProgress?.(table.name, copied, table.count);
  }
  return copied;
}

/** The page as one array per column (what unnest takes back apart into rows). */
function byColumn(page: DumpedRow[], width: number): unknown[][] {
  const columns: unknown[][] = Array.from({ length: width }, () => new Array<unknown>(page.length));
  page.forEach((row, r) => {
    for (let c = 0; c < width; c++) columns[c]![r] = row[c];
  });
  return columns;
}

/** Every identity's sequence past the highest id its table holds (none: left as it is). */
async function setSequencesPastIds(client: pg.PoolClient): Promise<void> {
  const { rows } = await client.query<{ table: string; column: string }>(
    `SELECT table_name AS table, column_name AS column FROM information_schema.columns
     WHERE table_schema = current_schema() AND is_identity = 'YES'`,
  );
  for (const { table, column } of rows)
    await client.query(
      `SELECT setval(pg_get_serial_sequence($1, $2), max("${column}")) FROM "${table}"`,
      [table, column],
    );
}

/**
 * `smsdrop migrate --to`: `dump` copied into the empty PostgreSQL journal at `url`, its schema
 * made first. A first connection that fails is E_MIGRATE_TARGET_UNREACHABLE, told with `shown`
 * (the URL with its password masked) and PostgreSQL's reason.
 */
export async function migrateInto(
  dump: TableDump,
  url: string,
  shown: string,
): Promise<CopyCounts> {
  const pool = openPool(url, 2);
  pool.on('error', () => undefined);
  try {
    await reach(pool, shown);
    await migratePostgres(pool);
    return await copyJournal(dump, pool);
  } finally {
    await pool.end().catch(() => undefined);
  }
}

/** A first connection, so that a wrong URL is told as such (PostgreSQL's reason, no password). */
async function reach(pool: pg.Pool, shown: string): Promise<void> {
  try {
    const client = await pool.connect();
    client.release();
  } catch (err) {
    const reason = err instanceof Error ? err.message : String(err);
    throw new SmsdropError(
      'E_MIGRATE_TARGET_UNREACHABLE',
      `migrate: cannot connect to ${shown}: ${reason}`,
    );
  }
}
