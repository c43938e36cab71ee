// Intake into the PostgreSQL journal (src/pgjournal/files.ts, planStore.ts, sentBefore.ts) plans a
// file exactly as the SQLite journal does: the same groups, batches, rows, duplicates, invalid and
// suppressed rows, and repeats of another file, compared through the views users query; an
// interrupted intake resumes as SQLite's does; two intakes at once on one database. The SQLite
// journal is opened through src/journals/, as the pipeline opens it, and read as users read it.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { after, describe, test } from 'node:test';
import type pg from 'pg';
import type { JournalHandle } from '../../src/ports/index.js';
import { isDatabaseOutage } from '../../src/errors.js';
import { openWriter } from '../../src/journals/index.js';
import { pgFileStore } from '../../src/pgjournal/files.js';
import { migratePostgres, openPool } from '../../src/pgjournal/schema.js';
import { pgReadStore } from '../../src/pgjournal/readStore.js';
import { withSqliteFile } from '../sqliteFile.js';
import { postgresMissing, usePostgres } from './cluster.js';
import { intakeFile, type IntakeRun, writeCsv } from './intakeRun.js';

const WINDOW = { ms: 86_400_000, text: '24h' };
const SUPPRESSED = '13800000014';

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'smsdrop-pg-intake-'));
after(() => fs.rmSync(dir, { recursive: true, force: true }));

function csvFile(name: string, rows: number, shift = 0): string {
  const csv = path.join(dir, name);
  writeCsv(csv, rows, shift);
  return csv;
}

/**
 * A batch's numbers on either journal: SQLite keeps a batch of one number in its row only
 * (src/journal/storedForms.ts).
 */
const PHONES = `coalesce(n.phones,
  CASE WHEN b.numbers = 1 THEN (SELECT o.phone FROM rows o WHERE o.batch_id = b.id LIMIT 1) END)`;

/** What the report interface shows of the journal's files and rows, and its batches' make-up. */
const VIEWS = {
  files: `SELECT id, name, status, rows, invalid, duplicates, accepted, failed, unknown, pending, requests
          FROM v_files ORDER BY id`,
  recipients: `SELECT file_id, file_name, line, phone_raw, phone, app_id, template_id, datas, extras, status,
                 status_msg FROM v_recipients ORDER BY file_id, line`,
  batches: `SELECT b.file_id, g.datas, ${PHONES} AS phones, b.numbers, b.state,
              CASE WHEN b.next_attempt_at = 0 THEN 1 ELSE 0 END AS due
            FROM batches b JOIN groups g ON g.id = b.group_id LEFT JOIN batch_numbers n ON n.batch_id = b.id
            ORDER BY b.file_id, g.datas, phones`,
  // Each row with its batch's numbers: which rows share a batch.
  placed: `SELECT r.file_id, r.line, ${PHONES} AS phones FROM rows r
           LEFT JOIN batches b ON b.id = r.batch_id LEFT JOIN batch_numbers n ON n.batch_id = r.batch_id
           ORDER BY r.file_id, r.line`,
  // Rows in id order: their lines ascend (the result file relies on it).
  order: 'SELECT file_id, line FROM rows ORDER BY id',
};
type Views = Record<keyof typeof VIEWS, unknown[]>;

function sqliteViews(dataDir: string): Views {
  return withSqliteFile(dataDir, (db) => {
    const views = {} as Views;
    for (const [name, sql] of Object.entries(VIEWS))
      views[name as keyof Views] = db.prepare(sql).all();
    return views;
  });
}

async function pgViews(pool: pg.Pool): Promise<Views> {
  const views = {} as Views;
  for (const [name, sql] of Object.entries(VIEWS))
    views[name as keyof Views] = (await pool.query(sql)).rows.map((row: object) => ({ ...row }));
  return views;
}

async function sqliteJournal(): Promise<{
  handle: JournalHandle;
  dataDir: string;
  run: IntakeRun;
}> {
  const data = fs.mkdtempSync(path.join(dir, 'data-'));
  const { handle } = await openWriter(
    { dataDir: data },
    {
      role: 'pg intake test',
      synchronous: 'normal',
      reqIdOn: false,
      onLost: () => assert.fail('journal lost'),
    },
  );
  after(() => handle.close());
  return {
    handle,
    dataDir: data,
    run: {
      files: handle.files,
      sentBefore: (id) => Promise.resolve(handle.reads.sentBefore(id, WINDOW)),
    },
  };
}

describe('intake into PostgreSQL', { skip: postgresMissing() }, () => {
  const pg15 = usePostgres();
  async function pgJournal(): Promise<{ pool: pg.Pool; run: IntakeRun; url: string }> {
    const url = await pg15.cluster.freshDatabase();
    const pool = openPool(url, 4);
    after(() => pool.end());
    await migratePostgres(pool);
    const reads = pgReadStore(pool);
    const run = {
      files: pgFileStore(pool),
      sentBefore: async (id: number) => reads.sentBefore(id, WINDOW),
    };
    return { pool, run, url };
  }

  test('plans two files as the SQLite journal does: groups, batches, duplicates, invalid, suppressed, repeats', async () => {
    const first = csvFile('first.csv', 3000);
    const second = csvFile('second.csv', 1500, 1200);
    const lite = await sqliteJournal();
    await lite.handle.suppression.add([SUPPRESSED], 'asked to stop', 'user');
    const pgj = await pgJournal();
    await pgj.pool.query(
      "INSERT INTO suppressed (phone, reason, source, added_at) VALUES ($1, 'asked to stop', 'user', $2)",
      [SUPPRESSED, new Date().toISOString()],
    );
    for (const csv of [first, second]) {
      await intakeFile(csv, lite.run);
      await intakeFile(csv, pgj.run);
    }
    const expected = sqliteViews(lite.dataDir);
    const got = await pgViews(pgj.pool);
    assert.deepEqual(got.files, expected.files);
    assert.deepEqual(got.recipients, expected.recipients);
    assert.deepEqual(got.batches, expected.batches);
    assert.deepEqual(got.placed, expected.placed);
    assert.deepEqual(got.order, expected.order);
    // What the comparison covers, so that it cannot pass on empty plans.
    const statuses = new Set(
      (got.recipients as Array<{ status: string; status_msg: string | null }>).map((r) => r.status),
    );
    assert.deepEqual([...statuses].sort(), ['duplicate', 'invalid', 'pending']);
    const messages = (got.recipients as Array<{ status_msg: string | null }>).map(
      (r) => r.status_msg ?? '',
    );
    assert.ok(
      messages.some((m) => m.startsWith('suppressed (user')),
      'a suppressed row',
    );
    assert.ok(
      messages.some((m) => m.includes('of first.csv (file 1)')),
      'a repeat of the first file',
    );
    assert.ok(
      messages.some((m) => m.startsWith('duplicate of line')),
      'a duplicate within the file',
    );
    for (const b of got.batches as Array<{ phones: string; numbers: number }>) {
      const phones = b.phones.split(',');
      assert.ok(
        phones.length <= 200 &&
          new Set(phones).size === phones.length &&
          b.numbers === phones.length,
      );
    }
  });

  test('an intake cut short and read again keeps the rows already sent, as SQLite does', async () => {
    const csv = csvFile('resumed.csv', 4000);
    const lite = await sqliteJournal();
    const pgj = await pgJournal();
    const sent = 'SELECT min(id) AS id FROM batches WHERE next_attempt_at = 0 AND numbers > 0';
    const attempt = 'INSERT INTO attempts (batch_id, req_id, started_at) VALUES ';
    const cut = await intakeFile(csv, { ...lite.run, chunks: 4 });
    const liteBatch = withSqliteFile(
      lite.dataDir,
      (db) => {
        const id = (db.prepare(sent).get() as { id: number }).id;
        db.prepare(`${attempt} (?, 'r', '2026-01-01T00:00:00.000Z')`).run(id);
        return id;
      },
      { write: true },
    );
    const pgCut = await intakeFile(csv, { ...pgj.run, chunks: 4 });
    const pgBatch = (await pgj.pool.query<{ id: number }>(sent)).rows[0]!.id;
    await pgj.pool.query(`${attempt} ($1, 'r', '2026-01-01T00:00:00.000Z')`, [pgBatch]);
    assert.ok(liteBatch > 0 && pgBatch > 0);

    await intakeFile(csv, { ...lite.run, fileId: cut.fileId });
    await intakeFile(csv, { ...pgj.run, fileId: pgCut.fileId });
    const expected = sqliteViews(lite.dataDir);
    const got = await pgViews(pgj.pool);
    assert.deepEqual(got, expected);
    const kept = await pgj.pool.query<{ n: number }>(
      'SELECT count(*)::int AS n FROM rows WHERE batch_id = $1',
      [pgBatch],
    );
    assert.ok(kept.rows[0]!.n > 0, 'the sent batch kept its rows');
    assert.equal((got.files[0] as { rows: number }).rows, 4000);
  });

  test('a connection lost mid-intake fails it as the server gone; read again, the file is whole', async () => {
    const csv = csvFile('lost.csv', 6000);
    const pgj = await pgJournal();
    pgj.pool.on('error', () => undefined); // idle connections the server ended
    const killOthers = async () => {
      const admin = openPool(pgj.url, 1);
      await admin.query(
        'SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()',
      );
      await admin.end();
    };
    const cut = intakeFile(csv, {
      ...pgj.run,
      afterChunk: (n) => (n === 30 ? killOthers() : Promise.resolve()),
    });
    // The writer's transaction lost (E_JOURNAL_WRITE), or a read beside it (the earlier sends
    // looked up for the next chunk) on a connection the server ended: either way the pipeline
    // reads it as the server gone, and reads the file again once it answers.
    await assert.rejects(cut, (error) => isDatabaseOutage(error));
    // The failed intake's open transaction ended with it: no connection is left checked out
    // (the pool's end would wait for it for ever).
    for (let waited = 0; pgj.pool.totalCount !== pgj.pool.idleCount && waited < 2_000; waited += 50)
      await sleep(50);
    assert.equal(pgj.pool.totalCount, pgj.pool.idleCount, 'no connection left checked out');
    const file = (await pgj.pool.query<{ id: number }>('SELECT id FROM files')).rows[0]!;
    await intakeFile(csv, { ...pgj.run, fileId: file.id });
    const lite = await sqliteJournal();
    await intakeFile(csv, lite.run);
    const expected = sqliteViews(lite.dataDir);
    const got = await pgViews(pgj.pool);
    assert.deepEqual(got, expected);
  });

  test('two intakes at once on one database, each on its own pool, never share an id', async () => {
    const pgj = await pgJournal();
    const other = openPool(pgj.url, 4);
    after(() => other.end());
    const one = csvFile('one.csv', 5000);
    const two = csvFile('two.csv', 5000, 100_000);
    await Promise.all([
      intakeFile(one, { files: pgFileStore(pgj.pool) }),
      intakeFile(two, { files: pgFileStore(other) }),
    ]);
    const lite = await sqliteJournal();
    await intakeFile(one, { files: lite.handle.files });
    await intakeFile(two, { files: lite.handle.files });
    const expected = sqliteViews(lite.dataDir);
    const got = await pgViews(pgj.pool);
    // file ids follow who created first: compare each file's plan by name
    const byName = (rows: unknown[]) =>
      [...(rows as Array<Record<string, unknown>>)]
        .map(({ id: _id, file_id: _f, ...rest }) => rest)
        .sort((a, b) => JSON.stringify(a).localeCompare(JSON.stringify(b)));
    assert.deepEqual(byName(got.files), byName(expected.files));
    assert.deepEqual(byName(got.recipients), byName(expected.recipients));
    assert.deepEqual(byName(got.batches), byName(expected.batches));
    const order = got.order as Array<{ file_id: number; line: number }>;
    for (const fileId of [1, 2]) {
      const lines = order.filter((r) => r.file_id === fileId).map((r) => r.line);
      assert.deepEqual(
        lines,
        [...lines].sort((a, b) => a - b),
        'rows in id order follow the file',
      );
    }
  });
});
