// The SQLite views against a real run, read on the journal's file as the sqlite3 shell reads them
// (test/sqliteFile.ts): every count agrees with what the simulator received, the views answer
// from indexes, and readers never wait for the writer (WAL).
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { acquireLock } from '../../src/datadir/lock.js';
import { journalPath, openReader } from '../../src/journals/index.js';
import type { RunningSimulator } from '../../src/simulator/index.js';
import {
  acceptedNumbers,
  cleanUp,
  runCli,
  sendCsv,
  simulator,
  tempDir,
  writeCsvFile,
} from './helpers.js';
import { makeJournal, openSqliteFile, type SqliteFile, withSqliteFile } from '../sqliteFile.js';

after(cleanUp);

const BLOCKED = '13900000001';
// Group A (x,1): the blocked number first, so its batch of 4 splits 4 -> 2 -> 1.
// Group B (y,2): 6 numbers, batches of 4 and 2. Two invalid rows, two duplicates.
const LINES = [
  'phone,templateId,data1,data2,note',
  `${BLOCKED},1,x,1,blocked`, // line 2
  '13900000002,1,x,1,', // 3
  '13900000003,1,x,1,', // 4
  '13900000004,1,x,1,', // 5
  '13800000001,1,y,2,', // 6
  '13800000002,1,y,2,', // 7
  '13800000003,1,y,2,', // 8
  '13800000004,1,y,2,', // 9
  '13800000005,1,y,2,', // 10
  '13800000006,1,y,2,', // 11
  '12345,1,y,2,too short', // 12
  'abc,1,y,2,not a number', // 13
  '138 0000 0001,1,y,2,again', // 14: duplicate of line 6
  '13900000003,1,x,1,again', // 15: duplicate of line 4
];

describe('views after a run against the simulator', () => {
  let dir: string;
  let sim: RunningSimulator;
  let db: SqliteFile;

  before(async () => {
    dir = tempDir();
    sim = await simulator({ blocked: [BLOCKED] });
    const result = await sendCsv(
      path.join(dir, 'data'),
      sim,
      writeCsvFile(dir, 'campaign.csv', LINES),
      { maxPerRequest: 4 },
    );
    assert.equal(result.outcome, 'finished');
    db = openSqliteFile(path.join(dir, 'data'));
  });
  after(() => db?.close());

  it('v_files counts add up and agree with the simulator', () => {
    const f = db.prepare('SELECT * FROM v_files').get() as Record<string, unknown>;
    assert.deepEqual(
      {
        rows: f.rows,
        invalid: f.invalid,
        duplicates: f.duplicates,
        accepted: f.accepted,
        failed: f.failed,
        unknown: f.unknown,
        pending: f.pending,
      },
      { rows: 14, invalid: 2, duplicates: 2, accepted: 9, failed: 1, unknown: 0, pending: 0 },
    );
    assert.equal(
      f.requests,
      sim.requestCount,
      'every request the simulator saw is counted, and no other',
    );
    assert.equal(f.name, 'campaign.csv');
    assert.equal(f.status, 'done');
  });

  it('accepted rows are exactly the numbers the simulator received, each once', () => {
    const accepted = db
      .prepare("SELECT phone FROM v_recipients WHERE status = 'accepted' ORDER BY phone")
      .pluck()
      .all();
    const received = acceptedNumbers(sim).sort();
    assert.deepEqual(accepted, received);
    assert.equal(new Set(received).size, received.length, 'no number was accepted twice');
    assert.ok(!received.includes(BLOCKED));
  });

  it('v_recipients: one row per input row, with values, outcome and the requests that carried it', () => {
    const rows = db.prepare('SELECT * FROM v_recipients ORDER BY line').all() as Array<
      Record<string, unknown>
    >;
    assert.equal(rows.length, 14);
    const byLine = new Map(rows.map((r) => [r.line, r]));
    assert.deepEqual(
      {
        status: byLine.get(2)!.status,
        code: byLine.get(2)!.status_code,
        attempts: byLine.get(2)!.attempts,
        datas: byLine.get(2)!.datas,
      },
      { status: 'failed', code: '160034', attempts: 3, datas: '["x","1"]' },
    );
    assert.equal(
      byLine.get(4)!.attempts,
      2,
      'in the rejected batch of 4, then in an accepted half',
    );
    assert.equal(byLine.get(6)!.attempts, 1);
    assert.equal(byLine.get(6)!.status_code, '000000');
    assert.match(String(byLine.get(6)!.sms_message_sid), /^[0-9a-f]{32}$/);
    assert.equal(byLine.get(12)!.status, 'invalid');
    assert.match(String(byLine.get(12)!.status_msg), /mainland China mobile/);
    assert.equal(byLine.get(14)!.status_msg, 'duplicate of line 6');
    assert.equal(byLine.get(14)!.phone_raw, '138 0000 0001');
    assert.equal(byLine.get(14)!.phone, '13800000001');
    assert.equal(byLine.get(2)!.extras, '{"note":"blocked"}');
    assert.ok(
      rows.every((r) => r.file_name === 'campaign.csv' && r.app_id && r.template_id === '1'),
    );
  });

  it('v_failures: per file and status code, a count and a sample message', () => {
    const failures = db
      .prepare('SELECT status, status_code, count, sample_message FROM v_failures')
      .all() as Array<Record<string, unknown>>;
    assert.equal(failures.length, 1);
    assert.deepEqual(
      { ...failures[0], sample_message: undefined },
      { status: 'failed', status_code: '160034', count: 1, sample_message: undefined },
    );
    assert.match(String(failures[0]!.sample_message), /160034/);
  });
});

describe('query plans', () => {
  /** The plan of `query` on a fresh journal. */
  const planOf = async (query: string) => {
    const dataDir = tempDir();
    await makeJournal(dataDir);
    return withSqliteFile(dataDir, (db) =>
      (db.prepare(`EXPLAIN QUERY PLAN ${query}`).all() as Array<{ detail: string }>).map(
        (r) => r.detail,
      ),
    );
  };

  it('v_files for one file reads no table from end to end: index ranges only', async () => {
    const plan = await planOf('SELECT * FROM v_files WHERE id = 1');
    assert.ok(!plan.some((d) => /^SCAN /.test(d)), plan.join('\n'));
    assert.equal(
      plan.filter((d) => /SEARCH b USING INDEX batches_by_file \(file_id=\? AND state=\?\)/.test(d))
        .length,
      5, // accepted, failed, unknown, cancelled; pending's two states are one more
      plan.join('\n'),
    );
  });

  it('v_failures for one file reads only its failed and unknown batches', async () => {
    const plan = await planOf('SELECT * FROM v_failures WHERE file_id = 1');
    assert.ok(
      plan.some((d) => /SEARCH b USING INDEX batches_by_file \(file_id=\? AND state=\?\)/.test(d)),
      plan.join('\n'),
    );
    assert.ok(!plan.some((d) => /^SCAN (b|batches)\b/.test(d)), plan.join('\n'));
  });
});

/**
 * A journal as an older version left it: without the views and later tables, and made before
 * auto_vacuum was INCREMENTAL (so opening it to write would VACUUM it).
 */
async function writeOldJournal(dataDir: string): Promise<void> {
  await makeJournal(dataDir);
  const old = openSqliteFile(dataDir, { write: true });
  old.exec(
    'DROP VIEW v_files; DROP VIEW v_recipients; DROP VIEW v_failures; DROP TABLE daemon_state; DROP INDEX attempts_by_finished; DROP INDEX rows_invalid; DROP TABLE suppressed; ALTER TABLE files DROP COLUMN repeats; DROP TABLE invalid_cells; ALTER TABLE files DROP COLUMN taken_at; ALTER TABLE files DROP COLUMN provider; DROP TABLE webhook_outbox; DROP INDEX files_to_prune; DROP TABLE pruned_totals; DROP INDEX groups_by_hash; DROP INDEX groups_by_file; CREATE INDEX groups_by_key ON groups (file_id, key_hash); DROP INDEX rows_by_group_phone; ALTER TABLE groups DROP COLUMN app; DROP TABLE apps; DROP TABLE processes; ' +
      [
        'pruned_at',
        'kept_accepted',
        'kept_failed',
        'kept_unknown',
        'kept_pending',
        'kept_requests',
        'kept_first_send',
        'kept_last_send',
        'control',
        'start_at',
        'control_by',
        'control_at',
        'kept_cancelled',
        'read_bytes',
        'run_ms',
        'run_started_at',
      ]
        .map((c) => `ALTER TABLE files DROP COLUMN ${c};`)
        .join(' ') +
      ' DELETE FROM schema_migrations WHERE version >= 2',
  );
  old.pragma('auto_vacuum = NONE');
  old.exec('VACUUM');
  old.close();
}

/** The migrations a journal has run, in order. */
const migrationsOf = (db: SqliteFile): number[] =>
  db.prepare('SELECT version FROM schema_migrations ORDER BY version').pluck().all() as number[];

const sha256Of = (file: string): string =>
  createHash('sha256').update(readFileSync(file)).digest('hex');

describe('a journal written before the views existed', () => {
  it('is upgraded when first opened for reading', async () => {
    const fresh = path.join(tempDir(), 'fresh');
    await makeJournal(fresh);
    const dataDir = path.join(tempDir(), 'data');
    await writeOldJournal(dataDir);
    assert.ok(
      withSqliteFile(dataDir, migrationsOf).length < withSqliteFile(fresh, migrationsOf).length,
    );
    (await openReader({ dataDir }))!.close();
    withSqliteFile(dataDir, (db) => {
      assert.deepEqual(db.prepare('SELECT * FROM v_files').all(), []);
      assert.deepEqual(migrationsOf(db), withSqliteFile(fresh, migrationsOf), 'every migration');
    });
  });

  it('is left as it is while another process holds the data directory: the reader says to upgrade with the daemon stopped, exit 2', async () => {
    const dataDir = path.join(tempDir(), 'data');
    await writeOldJournal(dataDir);
    const before = sha256Of(journalPath(dataDir));
    // This test's process stands for a daemon of the older version, running.
    const lock = acquireLock(dataDir, 'smsdrop daemon');
    try {
      for (const args of [['status'], ['report'], ['export', '1', '--out', '-']]) {
        const run = await runCli(args, { dataDir });
        assert.equal(run.code, 2, `${args[0]}: ${run.stderr}`);
        assert.match(
          run.stderr,
          /^smsdrop: E_JOURNAL_NEEDS_UPGRADE: .*upgrade with the daemon stopped/m,
        );
        assert.doesNotMatch(run.stderr, /\n\s+at /, 'no stack');
        assert.equal(sha256Of(journalPath(dataDir)), before, `${args[0]} changed the journal`);
      }
    } finally {
      lock.release();
    }
    const run = await runCli(['status'], { dataDir });
    assert.equal(run.code, 0, run.stderr);
    assert.notEqual(sha256Of(journalPath(dataDir)), before, 'upgraded once nobody holds it');
  });
});

describe('reading while the writer holds a transaction (WAL)', () => {
  it('a read-only connection and the sqlite3 shell read the last committed state at once', async () => {
    const dir = tempDir();
    const dataDir = path.join(dir, 'data');
    const sim = await simulator();
    await sendCsv(
      dataDir,
      sim,
      writeCsvFile(dir, 'a.csv', [
        'phone,templateId,data1,data2',
        '13800000001,1,a,b',
        '13800000002,1,a,b',
      ]),
    );
    const writer = openSqliteFile(dataDir, { write: true });
    const reader = openSqliteFile(dataDir);
    try {
      writer.exec('BEGIN IMMEDIATE');
      writer.prepare("UPDATE batches SET state = 'failed'").run();
      assert.equal(
        reader.prepare('SELECT accepted FROM v_files').pluck().get(),
        2,
        'the uncommitted change is not seen, and the read does not wait',
      );
      const shell = spawnSync(
        'sqlite3',
        ['-readonly', journalPath(dataDir), 'SELECT accepted, failed FROM v_files;'],
        { encoding: 'utf8', timeout: 20_000 },
      );
      if (!shell.error) {
        assert.equal(shell.status, 0, shell.stderr);
        assert.equal(shell.stdout.trim(), '2|0');
      }
      writer.exec('COMMIT');
      assert.equal(reader.prepare('SELECT failed FROM v_files').pluck().get(), 2);
    } finally {
      if (writer.inTransaction) writer.exec('ROLLBACK');
      writer.close();
      reader.close();
    }
  });
});
