// Opening the PostgreSQL journal from the real CLI (SMSDROP_DATABASE_URL), against a real
// PostgreSQL: the node's data-directory lock, the migrations and the node registered; readers
// that never migrate; the commands not on PostgreSQL yet stopping with their code; a server that
// cannot be reached, or TLS it does not offer, is one line with its code. The URL's password never
// shows.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { after, describe, test } from 'node:test';
import { parseDatabaseUrl } from '../../src/config/settings/database.js';
import { connectPool } from '../../src/pgjournal/index.js';
import { migratePostgres } from '../../src/pgjournal/schema.js';
import { type Run, smsdrop } from '../cli/helpers.js';
import { contactsCsv, tempDir } from '../daemon/helpers.js';
import { postgresMissing, usePostgres } from './cluster.js';

/** The cluster trusts every local connection: the password is only there to be hidden. */
const PASSWORD = 'S3cret-pg-Pa55word';

function withPassword(url: string): string {
  return url.replace('postgres://postgres@', `postgres://postgres:${PASSWORD}@`);
}

/** Exit 2 and one line `smsdrop: CODE: …` on stderr; no stack, no password anywhere. */
function assertCodeLine(run: Run, code: string, also?: RegExp): void {
  assert.equal(run.status, 2, run.stderr);
  const lines = run.stderr.split('\n').filter((l) => l.startsWith('smsdrop: '));
  assert.equal(lines.length, 1, run.stderr);
  assert.match(lines[0]!, new RegExp(`^smsdrop: ${code}: `));
  if (also) assert.match(lines[0]!, also);
  assert.doesNotMatch(run.stderr, /\n\s+at /, 'no stack');
  assert.ok(!`${run.stdout}${run.stderr}`.includes(PASSWORD), 'never the password');
}

describe('smsdrop on a PostgreSQL journal', { skip: postgresMissing() }, () => {
  const pg15 = usePostgres();
  const dirs: string[] = [];
  after(() => dirs.forEach((d) => fs.rmSync(d, { recursive: true, force: true })));
  function dataDir(): string {
    const dir = tempDir('pg-open');
    dirs.push(dir);
    return dir;
  }

  test('send: lock, migrations, node registered, no SQLite journal; the lock is released', async () => {
    const url = await pg15.cluster.freshDatabase();
    const dir = dataDir();
    const csv = path.join(dir, 'contacts.csv');
    fs.writeFileSync(csv, contactsCsv(3));
    const env = {
      SMSDROP_DATA_DIR: dir,
      SMSDROP_DATABASE_URL: withPassword(url),
      SMSDROP_NODE_ID: 'node-a',
    };
    const run = await smsdrop(['send', csv], env);
    assert.equal(run.status, 0, run.stderr);
    assert.ok(!`${run.stdout}${run.stderr}`.includes(PASSWORD), 'never the password');
    const pool = pg15.cluster.pool(url);
    const versions = await pool.query<{ version: number }>('SELECT version FROM schema_migrations');
    assert.ok(versions.rows.length >= 2, 'migrated');
    const nodes = await pool.query<{ id: string }>('SELECT id FROM nodes');
    assert.deepEqual(nodes.rows, [{ id: 'node-a' }]);
    assert.equal(fs.existsSync(path.join(dir, 'journal.sqlite')), false, 'no SQLite journal');
    // The data directory's lock was taken and given back: a second run finds the file sent.
    const again = await smsdrop(['send', csv], env);
    assert.equal(again.status, 0, again.stderr);
    assert.match(again.stderr + again.stdout, /already/i);
  });

  test('readers: nothing journalled yet, an old schema not upgraded; backup refuses, suppress writes', async () => {
    const url = await pg15.cluster.freshDatabase();
    const env = { SMSDROP_DATA_DIR: dataDir(), SMSDROP_DATABASE_URL: withPassword(url) };
    const empty = await smsdrop(['report'], env);
    assert.equal(empty.status, 0, empty.stderr);
    assert.equal(await tablesIn(url), 0, 'a reader never migrates');
    const pool = pg15.cluster.pool(url);
    await pool.query(
      'CREATE TABLE schema_migrations (version integer PRIMARY KEY, name text NOT NULL, applied_at text NOT NULL)',
    );
    await pool.query("INSERT INTO schema_migrations VALUES (1, 'm', 't')");
    assertCodeLine(await smsdrop(['status'], env), 'E_JOURNAL_NEEDS_UPGRADE');
    await pool.query('DROP TABLE schema_migrations');
    await migratePostgres(pool);
    const listed = await smsdrop(['report', '--format', 'json'], env);
    assert.equal(listed.status, 0, listed.stderr);
    assert.deepEqual(JSON.parse(listed.stdout), []);
    assertCodeLine(await smsdrop(['backup', dataDir()], env), 'E_BACKUP_POSTGRES', /pg_dump/);
    const added = await smsdrop(['suppress', 'add', '13800138000'], env);
    assert.equal(added.status, 0, added.stderr);
    const { rows } = await pool.query<{ phone: string }>('SELECT phone FROM suppressed');
    assert.deepEqual(rows, [{ phone: '13800138000' }], 'suppress add writes PostgreSQL');
  });

  test('a server that cannot be reached: E_DATABASE_UNREACHABLE, without the password', async () => {
    const closed = withPassword(pg15.cluster.url).replace(`:${pg15.cluster.port}/`, ':1/');
    const dir = dataDir();
    const csv = path.join(dir, 'contacts.csv');
    fs.writeFileSync(csv, contactsCsv(3));
    const env = { SMSDROP_DATA_DIR: dir, SMSDROP_DATABASE_URL: closed };
    assertCodeLine(await smsdrop(['send', csv], env), 'E_DATABASE_UNREACHABLE', /\(hidden\)/);
    assertCodeLine(await smsdrop(['report'], env), 'E_DATABASE_UNREACHABLE');
  });

  test('TLS is demanded of a server that is not loopback (or when the URL asks)', async () => {
    const url = withPassword(pg15.cluster.url);
    for (const databaseUrl of [
      // As a remote host's URL is read: not local, so TLS with verification.
      {
        ...(parseDatabaseUrl(url) as Exclude<ReturnType<typeof parseDatabaseUrl>, string>),
        local: false,
      },
      parseDatabaseUrl(`${url}?sslmode=verify-full`) as Exclude<
        ReturnType<typeof parseDatabaseUrl>,
        string
      >,
    ])
      await assert.rejects(
        connectPool({
          databaseUrl,
          leaseMs: 30_000,
          connectTimeoutMs: 5_000,
          concurrency: 8,
          providerHoldMs: 0,
        }),
        (err: { code?: string; message: string }) => {
          assert.equal(err.code, 'E_DATABASE_UNREACHABLE');
          assert.match(err.message, /does not support SSL/);
          assert.ok(!err.message.includes(PASSWORD));
          return true;
        },
      );
  });

  async function tablesIn(url: string): Promise<number> {
    const { rows } = await pg15.cluster
      .pool(url)
      .query<{ n: string }>("SELECT count(*) AS n FROM pg_tables WHERE schemaname = 'public'");
    return Number(rows[0]!.n);
  }
});
