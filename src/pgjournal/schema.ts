// Creating and upgrading the PostgreSQL journal's schema, and the pool it is used through.
//
// Several daemons may start at once on one empty database: migrations run in one transaction under
// a transaction-level advisory lock, so the first to take it migrates and the others, waiting for
// it, then find every migration applied. The lock comes before anything else, even `CREATE TABLE
// IF NOT EXISTS schema_migrations`: two of those at once can both fail on the catalog's unique
// index. DDL is transactional in PostgreSQL, so a failed migration leaves nothing behind.
import pg from 'pg';
import { SmsdropError } from '../errors.js';
import { PG_MIGRATIONS } from './migrations.js';
import { JournalClient, setUpConnection } from './journalClient.js';
import { withTransaction } from './smallTransaction.js';

/** The advisory lock migrations run under: "smsdrop" as a number, chosen once, never changed. */
export const MIGRATION_LOCK = 0x736d7364726f70n;

const INT8_OID = 20;

/**
 * bigint as a JavaScript number, as the SQLite journal gives ids and counts; a value past 2^53
 * (never a row id or a count) is an error rather than a rounded number. node-postgres gives int8
 * as a string by default.
 */
function parseInt8(text: string): number {
  const value = Number(text);
  if (!Number.isSafeInteger(value))
    throw new SmsdropError('E_INTERNAL', `a bigint past 2^53 from PostgreSQL: ${text}`);
  return value;
}

/** The type parsers of the journal's pool (per pool: pg's global parsers stay as they are). */
function getTypeParser(oid: number, format?: 'text' | 'binary'): (value: string) => unknown {
  if (oid === INT8_OID && format !== 'binary') return parseInt8;
  // eslint-disable-next-line @typescript-eslint/no-unsafe-assignment -- pg-types types it as any
  const parser: (value: string) => unknown = pg.types.getTypeParser(oid, format);
  return parser;
}
const journalTypes: pg.CustomTypesConfig = { getTypeParser };

/**
 * Connections a pool keeps however long they idle (pg-pool closes the others after 10 s): a
 * daemon's attempts, outcomes, claims and intake find theirs open when the next file comes. A new
 * one costs its connection, its setting and each statement prepared again, which the next file's
 * first request would wait for (docs/postgres.md, "The pool's connections").
 */
const KEPT_CONNECTIONS = 4;

/**
 * A pool on the journal's database with its type parsers and its connections (journalClient.ts:
 * set up before their first statement, each statement prepared once); `more`: its TLS and
 * timeouts (pgjournal/index.ts), which the URL cannot override as long as it holds no ssl
 * parameter.
 */
export function openPool(
  connectionString: string,
  max = 10,
  more: Pick<pg.PoolConfig, 'ssl' | 'connectionTimeoutMillis' | 'idleTimeoutMillis'> = {},
): pg.Pool {
  const pool = new pg.Pool({
    connectionString,
    max,
    min: Math.min(KEPT_CONNECTIONS, max),
    types: journalTypes,
    Client: JournalClient,
    // A statement goes on the wire at once even while the connection's earlier ones are still
    // answered: a turn's writes then share their round trips (writeQueue.ts). Used one at a time,
    // a connection behaves as without; no statement here keeps a portal open (pg's `rows`, a
    // cursor), which pipeline mode refuses.
    pipeline: true,
    // eslint-disable-next-line @typescript-eslint/no-misused-promises -- pg-pool awaits it
    onConnect: setUpConnection,
    // a server gone silent (its host lost) is found by the socket's probes, not hours later
    keepAlive: true,
    keepAliveInitialDelayMillis: 10_000,
    ...more,
  });
  // an idle connection the server ends is the pool's to drop (its 'error'); unheard, the event
  // ends the process
  pool.on('error', () => undefined);
  return pool;
}

export interface MigrationResult {
  /** Versions this call applied (empty when another process had applied them all). */
  applied: number[];
  /** The schema's version afterwards. */
  version: number;
}

/** Brings the schema to the newest version, once, whoever else is doing the same right now. */
export async function migratePostgres(pool: pg.Pool): Promise<MigrationResult> {
  return withTransaction(pool, async (client) => {
    await client.query('SELECT pg_advisory_xact_lock($1)', [MIGRATION_LOCK.toString()]);
    await client.query(
      'CREATE TABLE IF NOT EXISTS schema_migrations (version integer PRIMARY KEY, name text NOT NULL, applied_at text NOT NULL)',
    );
    const { rows } = await client.query<{ version: number }>(
      'SELECT version FROM schema_migrations',
    );
    const done = new Set(rows.map((row) => row.version));
    const newest = Math.max(...PG_MIGRATIONS.map((m) => m.version));
    const unknown = [...done].filter((v) => v > newest);
    if (unknown.length > 0)
      throw new SmsdropError(
        'E_JOURNAL_NEWER',
        `the PostgreSQL journal has schema version ${Math.max(...unknown)}, newer than this smsdrop's ${newest}: upgrade smsdrop`,
      );
    const applied: number[] = [];
    for (const migration of PG_MIGRATIONS) {
      if (done.has(migration.version)) continue;
      await client.query(migration.sql);
      await client.query(
        'INSERT INTO schema_migrations (version, name, applied_at) VALUES ($1, $2, $3)',
        [migration.version, migration.name, new Date().toISOString()],
      );
      applied.push(migration.version);
    }
    return { applied, version: newest };
  });
}
