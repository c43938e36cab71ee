// `smsdrop migrate --to postgres://…` through the real CLI: a journal made by `smsdrop send`
// copied into an empty PostgreSQL journal with its ids, the sequences past them; a second copy
// refused (the target is not empty), a copy refused while the daemon holds the data directory; the
// URL's password never shown.
import assert from 'node:assert/strict';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import type pg from 'pg';
import { DUMPED_TABLES } from '../../src/ports/index.js';
import { openPool } from '../../src/pgjournal/schema.js';
import { smsdrop } from '../cli/helpers.js';
import { startDaemon, tempDir } from '../daemon/helpers.js';
import { withSqliteFile } from '../sqliteFile.js';
import { postgresMissing, usePostgres } from './cluster.js';
import { type SentJournal, sentJournal } from './sentJournal.js';

const PASSWORD = 'Pw-s3cret-4711';

/**
 * What the copy reads as a table, where SQLite does not keep every row of it: a batch of one
 * number keeps it in its row only (src/journal/storedForms.ts).
 */
const SOURCES: Record<string, string> = {
  batch_numbers: `batches b WHERE EXISTS (SELECT 1 FROM batch_numbers WHERE batch_id = b.id)
    OR (b.numbers = 1 AND EXISTS (SELECT 1 FROM rows WHERE batch_id = b.id))`,
};

function sqliteCounts(dataDir: string): Array<{ table: string; rows: number }> {
  return withSqliteFile(dataDir, (db) =>
    DUMPED_TABLES.map(([table]) => ({
      table,
      rows: db
        .prepare(`SELECT count(*) FROM ${SOURCES[table] ?? table}`)
        .pluck()
        .get() as number,
    })),
  );
}

/** The counts `migrate` printed, one "  table  rows" line each. */
function printedCounts(stdout: string): Array<{ table: string; rows: number }> {
  return [...stdout.matchAll(/^ {2}(\w+) +(\d+)$/gm)].map((m) => ({
    table: m[1]!,
    rows: Number(m[2]),
  }));
}

function oneLine(text: string): void {
  assert.equal(text.trim().split('\n').length, 1, text);
  assert.doesNotMatch(text, /\n\s+at /, 'no stack');
}

describe('smsdrop migrate --to', { skip: postgresMissing() }, () => {
  const pg15 = usePostgres();
  let made: SentJournal;
  /** A database owned by a user with a password, its URL with the password, and a pool on it. */
  let target: { url: string; pool: pg.Pool };

  before(async () => {
    made = await sentJournal();
    const url = await pg15.cluster.freshDatabase();
    const name = new URL(url).pathname.slice(1);
    const admin = pg15.cluster.pool(url, 1);
    await admin.query(`CREATE ROLE mover LOGIN PASSWORD '${PASSWORD}'`);
    await admin.query(`ALTER DATABASE ${name} OWNER TO mover`);
    const withPassword = new URL(url);
    withPassword.username = 'mover';
    withPassword.password = PASSWORD;
    const pool = openPool(withPassword.toString(), 2);
    pool.on('error', () => undefined);
    target = { url: withPassword.toString(), pool };
  });
  after(async () => {
    await target?.pool.end();
    await made?.simulator.stop();
  });

  test('copies every table with its ids, says how many rows, never the password', async () => {
    const run = await smsdrop(['migrate', '--to', target.url], made.env);
    assert.equal(run.status, 0, run.stderr);
    assert.ok(!`${run.stdout}${run.stderr}`.includes(PASSWORD), run.stdout);
    assert.match(run.stdout, /into postgres:\/\/mover:\*\*\*@127\.0\.0\.1:\d+\/test_\d+ /);
    const counts = sqliteCounts(made.dataDir);
    assert.deepEqual(printedCounts(run.stdout), counts);
    assert.ok(
      counts.every((c) => c.table === 'pruned_totals' || c.rows > 0),
      JSON.stringify(counts),
    );
    const withoutNumbers = await target.pool.query(
      'SELECT id FROM batches b WHERE EXISTS (SELECT 1 FROM rows WHERE batch_id = b.id) AND NOT EXISTS (SELECT 1 FROM batch_numbers WHERE batch_id = b.id)',
    );
    assert.deepEqual(
      withoutNumbers.rows,
      [],
      'every batch holding rows has its numbers on PostgreSQL',
    );
    for (const table of ['rows', 'batches', 'attempts', 'webhook_outbox'])
      assert.deepEqual(
        (await target.pool.query<{ id: number }>(`SELECT id FROM ${table} ORDER BY id`)).rows.map(
          (r) => r.id,
        ),
        withSqliteFile(made.dataDir, (db) =>
          db.prepare(`SELECT id FROM ${table} ORDER BY id`).pluck().all(),
        ),
        table,
      );
  });

  test('the sequences go on past the copied ids', async () => {
    for (const table of ['files', 'groups', 'rows', 'batches', 'attempts', 'webhook_outbox']) {
      const top = (await target.pool.query<{ top: number }>(`SELECT max(id) AS top FROM ${table}`))
        .rows[0]!.top;
      const next = (
        await target.pool.query<{ next: number }>(
          `SELECT nextval(pg_get_serial_sequence('${table}', 'id')) AS next`,
        )
      ).rows[0]!.next;
      assert.equal(next, top + 1, table);
    }
  });

  test('a second copy is refused: the target is not empty, and nothing is written', async () => {
    const before = (await target.pool.query<{ n: number }>('SELECT count(*) AS n FROM rows'))
      .rows[0]!.n;
    const run = await smsdrop(['migrate', '--to', target.url], made.env);
    assert.equal(run.status, 2, run.stderr);
    oneLine(run.stderr);
    assert.match(run.stderr, /^smsdrop: E_MIGRATE_TARGET_NOT_EMPTY: .*rows in files, groups, rows/);
    assert.ok(!`${run.stdout}${run.stderr}`.includes(PASSWORD));
    const after = (await target.pool.query<{ n: number }>('SELECT count(*) AS n FROM rows'))
      .rows[0]!.n;
    assert.equal(after, before);
  });

  test('a URL that does not connect: one line, its code, no password', async () => {
    const wrong = new URL(target.url);
    wrong.port = '1';
    const run = await smsdrop(['migrate', '--to', wrong.toString()], made.env);
    assert.equal(run.status, 2, run.stderr);
    oneLine(run.stderr);
    assert.match(
      run.stderr,
      /^smsdrop: E_MIGRATE_TARGET_UNREACHABLE: migrate: cannot connect to postgres:\/\/mover:\*\*\*@127\.0\.0\.1:1\//,
    );
    assert.ok(!`${run.stdout}${run.stderr}`.includes(PASSWORD));
  });

  test('refused while the daemon holds the data directory, and with no journal at all', async () => {
    const fresh = await pg15.cluster.freshDatabase();
    const daemon = await startDaemon({ dataDir: made.dataDir, simulator: made.simulator });
    try {
      const run = await smsdrop(['migrate', '--to', fresh], made.env);
      assert.equal(run.status, 2, run.stderr);
      oneLine(run.stderr);
      assert.match(run.stderr, /^smsdrop: E_DATA_DIR_LOCKED: migrate: .*stop the daemon/);
    } finally {
      daemon.kill('SIGTERM');
      await daemon.exited;
    }
    const empty = await smsdrop(['migrate', '--to', fresh], {
      ...made.env,
      SMSDROP_DATA_DIR: tempDir('pg-none'),
    });
    assert.equal(empty.status, 2, empty.stderr);
    assert.match(empty.stderr, /^smsdrop: E_USAGE: migrate: no journal in /);
    const missing = path.join(tempDir('pg-none'), 'not-made');
    const none = await smsdrop(['migrate', '--to', fresh], {
      ...made.env,
      SMSDROP_DATA_DIR: missing,
    });
    assert.equal(none.status, 2, none.stderr);
    oneLine(none.stderr);
    assert.match(none.stderr, /^smsdrop: E_USAGE: migrate: no journal in /);
  });
});
