// The PostgreSQL journal's schema (src/pgjournal): migrations run once whoever starts first, and
// the report interface (the views users query) has SQLite's names, columns and answers.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { after, describe, test } from 'node:test';
import type pg from 'pg';
import { PG_MIGRATIONS } from '../../src/pgjournal/migrations.js';
import { MIGRATION_LOCK, migratePostgres, openPool } from '../../src/pgjournal/schema.js';
import { makeJournal, openSqliteFile, type SqliteFile } from '../sqliteFile.js';
import { postgresMissing, usePostgres } from './cluster.js';
import { SAMPLE, insertSql } from './sample.js';

const VIEWS = ['row_results', 'v_files', 'v_recipients', 'v_failures'];
/** Columns only the PostgreSQL journal has: several nodes' leases (2), batches sent first (8). */
const PG_ONLY: Record<string, string[]> = {
  batches: ['lease_node', 'lease_until', 'send_first'],
};
/**
 * SQLite's tables of its own: the migrations' bookkeeping, the lost-commit intents, and what it
 * keeps once and refers to (src/journal/storedForms.ts: PostgreSQL keeps the text).
 */
const SQLITE_ONLY = ['intents', 'schema_migrations', 'sqlite_sequence', 'apps', 'processes'];
/** SQLite's columns of its own: a group's app by reference (storedForms.ts). */
const SQLITE_ONLY_COLUMNS: Record<string, string[]> = { groups: ['app'] };

/** A fresh SQLite journal, made as smsdrop makes it, its file open for plain SQL. */
async function sqliteJournal(): Promise<SqliteFile> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'pg-schema-'));
  await makeJournal(dir);
  const db = openSqliteFile(dir, { write: true });
  after(() => {
    db.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });
  return db;
}

function sqliteColumns(db: SqliteFile, relation: string): string[] {
  return (db.pragma(`table_info(${relation})`) as { name: string }[])
    .map((c) => c.name)
    .filter((name) => !SQLITE_ONLY_COLUMNS[relation]?.includes(name));
}

async function pgColumns(pool: pg.Pool, relation: string): Promise<string[]> {
  const { rows } = await pool.query<{ column_name: string }>(
    "SELECT column_name FROM information_schema.columns WHERE table_schema = 'public' AND table_name = $1 ORDER BY ordinal_position",
    [relation],
  );
  return rows.map((row) => row.column_name);
}

describe('the PostgreSQL journal schema', { skip: postgresMissing() }, () => {
  const pg15 = usePostgres();
  /** A pool with the journal's type parsers, ended before the cluster stops. */
  async function journalPool(max = 4): Promise<pg.Pool> {
    const pool = openPool(await pg15.cluster.freshDatabase(), max);
    pool.on('error', () => undefined);
    after(() => pool.end());
    return pool;
  }

  test('two daemons migrating at once: both succeed, the schema is made once', async () => {
    const url = await pg15.cluster.freshDatabase();
    const [one, two] = [openPool(url, 2), openPool(url, 2)];
    const holder = pg15.cluster.pool(url, 2);
    after(() => Promise.all([one.end(), two.end()]));
    // Both start while a third session holds the lock, so they race for it when it goes.
    const held = await holder.connect();
    await held.query('BEGIN');
    await held.query('SELECT pg_advisory_xact_lock($1)', [MIGRATION_LOCK.toString()]);
    const both = Promise.allSettled([migratePostgres(one), migratePostgres(two)]);
    const waiting = async () =>
      (
        await holder.query<{ n: number }>(
          "SELECT count(*)::int AS n FROM pg_locks WHERE locktype = 'advisory' AND NOT granted",
        )
      ).rows[0]!.n;
    for (const deadline = Date.now() + 30_000; Date.now() < deadline; await sleep(20))
      if ((await waiting()) === 2) break;
    await held.query('COMMIT');
    held.release();
    const results = (await both).map((r) => {
      if (r.status === 'rejected') throw r.reason;
      return r.value;
    });
    const all = PG_MIGRATIONS.map((m) => m.version);
    assert.deepEqual(
      results.map((r) => r.applied).sort((a, b) => b.length - a.length),
      [all, []],
    );
    const { rows } = await one.query<{ version: number }>(
      'SELECT version FROM schema_migrations ORDER BY version',
    );
    assert.deepEqual(
      rows.map((r) => r.version),
      all,
    );
    assert.deepEqual(await migratePostgres(two), { applied: [], version: Math.max(...all) });
  });

  test("the views users query have SQLite's names and columns, in order", async () => {
    const pool = await journalPool();
    await migratePostgres(pool);
    const db = await sqliteJournal();
    for (const view of VIEWS) {
      const sqlite = sqliteColumns(db, view);
      assert.ok(sqlite.length > 0, `SQLite has ${view}`);
      assert.deepEqual(await pgColumns(pool, view), sqlite, view);
    }
  });

  test("the tables have SQLite's columns (and the leases of several nodes)", async () => {
    const pool = await journalPool();
    await migratePostgres(pool);
    const db = await sqliteJournal();
    const tables = (
      db.prepare("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name").all() as {
        name: string;
      }[]
    )
      .map((t) => t.name)
      .filter((name) => !SQLITE_ONLY.includes(name));
    assert.ok(tables.includes('batches') && tables.includes('webhook_outbox'));
    for (const table of tables) {
      const sqlite = sqliteColumns(db, table);
      const expected = [...sqlite, ...(PG_ONLY[table] ?? [])].sort();
      assert.deepEqual((await pgColumns(pool, table)).sort(), expected, table);
    }
  });

  test('every foreign key has an index on its column: deleting what it points to looks it up', async () => {
    const pool = await journalPool();
    await migratePostgres(pool);
    // An index leading with the key's column, whole or leaving out only its nulls (a partial
    // index WHERE column IS NOT NULL serves the lookup "column = value").
    const { rows } = await pool.query<{ key: string }>(
      `SELECT c.conrelid::regclass::text || '.' || a.attname AS key
       FROM pg_constraint c
       JOIN pg_attribute a ON a.attrelid = c.conrelid AND a.attnum = c.conkey[1]
       WHERE c.contype = 'f' AND NOT EXISTS (
         SELECT 1 FROM pg_index i
         WHERE i.indrelid = c.conrelid AND i.indkey[0] = c.conkey[1]
           AND (i.indpred IS NULL OR pg_get_expr(i.indpred, i.indrelid) = '(' || a.attname || ' IS NOT NULL)'))
       ORDER BY 1`,
    );
    const { rows: keys } = await pool.query<{ n: number }>(
      "SELECT count(*)::int AS n FROM pg_constraint WHERE contype = 'f'",
    );
    // rows have none: their references are kept by the order of the writes (migration 19)
    assert.ok(keys[0]!.n >= 7, `${keys[0]!.n} foreign keys`);
    assert.deepEqual(
      rows.map((r) => r.key),
      [],
    );
  });

  test('the views answer as SQLite does on the same journal content', async () => {
    const pool = await journalPool();
    await migratePostgres(pool);
    const db = await sqliteJournal();
    for (const [table, rows] of SAMPLE)
      for (const row of rows) {
        db.prepare(insertSql(table, row, 'sqlite')).run(...Object.values(row));
        await pool.query(insertSql(table, row, 'pg'), Object.values(row));
      }
    for (const view of VIEWS) {
      const order = `ORDER BY ${view === 'v_failures' ? 'file_id, status, status_code' : '1'}`;
      const sqlite = db.prepare(`SELECT * FROM ${view} ${order}`).all();
      const { rows } = await pool.query(`SELECT * FROM ${view} ${order}`);
      assert.ok(sqlite.length > 0, `${view} has rows`);
      assert.deepEqual(rows, sqlite, view);
    }
  });
});
