// A journal whose attempts and batches hold their times as ISO text (as every smsdrop wrote them up
// to the migration that stores them as milliseconds), opened by this smsdrop: migrated in place,
// its rows read the same in v_recipients, in a file's request timing and in the table dump, and
// the references between its tables still hold.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, describe, it } from 'node:test';
import { openJournal } from '../../src/journal/open.js';
import { MIGRATIONS } from '../../src/journal/migrations.js';
import { requestTiming } from '../../src/journal/reportReads.js';
import Database from '../../src/journal/sqlite.js';
import { readableColumn, TIMES_AS_MILLISECONDS } from '../../src/journal/storedForms.js';
import { journalBefore } from './olderJournal.js';
import { sqliteOf } from './sqliteOf.js';

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'smsdrop-times-ms-'));
after(() => fs.rmSync(dir, { recursive: true, force: true }));

const TIMES_VERSION = MIGRATIONS.find((m) => m.sql === TIMES_AS_MILLISECONDS)!.version;
const T = ['2026-12-06T14:15:38.629Z', '2026-12-06T14:15:42.924Z', '2026-12-06T14:15:42.974Z'];

/** A journal as the migrations before the times' leave it: a file sent, one batch split. */
function journalBeforeTimes(file: string): void {
  const db = journalBefore(file, TIMES_VERSION);
  db.exec(`
    INSERT INTO files (id, sha256, name, size, encoding, status, header, created_at)
      VALUES (1, 'a', 'list.csv', 1, 'utf8', 'done', '{"columns":["phone"],"extras":[]}', '${T[0]}');
    INSERT INTO groups (id, file_id, key_hash, app_id, template_id, datas) VALUES (1, 1, 7, 'APP', '2', '[]');
    INSERT INTO batches (id, file_id, group_id, req_id, numbers, state, created_at, updated_at)
      VALUES (1, 1, 1, 'AAAAAAAAAAAAAAAA', 2, 'split', '${T[0]}', '${T[1]}');
    INSERT INTO batches (id, file_id, group_id, parent_id, req_id, numbers, state, status_code,
        sms_message_sid, date_created, created_at, updated_at)
      VALUES (2, 1, 1, 1, 'BBBBBBBBBBBBBBBB', 2, 'accepted', '000000', 'sid', '20261206221542',
        '${T[1]}', '${T[2]}');
    INSERT INTO batch_numbers (batch_id, phones) VALUES (2, '13800000001,13800000002');
    INSERT INTO rows (file_id, line, phone_raw, phone, group_id, intake, batch_id) VALUES
      (1, 2, '13800000001', '13800000001', 1, 'valid', 2),
      (1, 3, '13800000002', '13800000002', 1, 'valid', 2),
      (1, 4, '123', NULL, NULL, 'invalid', NULL);
    INSERT INTO attempts (batch_id, req_id, started_at, finished_at, outcome) VALUES
      (1, 'AAAAAAAAAAAAAAAA', '${T[0]}', '${T[1]}', 'rejected:too-many'),
      (2, 'BBBBBBBBBBBBBBBB', '${T[1]}', '${T[2]}', 'accepted');
  `);
  db.close();
}

const RECIPIENTS = 'SELECT * FROM v_recipients ORDER BY row_id';

describe("attempts' and batches' times as milliseconds", () => {
  it('an old journal migrates in place and reads the same, to the millisecond', () => {
    const file = path.join(dir, 'journal.sqlite');
    journalBeforeTimes(file);
    const old = new Database(file, { readonly: true });
    const recipientsBefore = old.prepare(RECIPIENTS).all();
    const dumpBefore = old.prepare('SELECT * FROM attempts ORDER BY id').all();
    old.close();

    const journal = openJournal(file);
    try {
      const db = sqliteOf(journal);
      assert.equal(
        db.prepare('SELECT max(version) FROM schema_migrations').pluck().get(),
        MIGRATIONS.at(-1)!.version,
      );
      assert.deepEqual(
        db
          .prepare(
            `SELECT DISTINCT typeof(started_at), typeof(finished_at) FROM attempts
             UNION ALL SELECT DISTINCT typeof(created_at), typeof(updated_at) FROM batches`,
          )
          .raw()
          .all(),
        [
          ['integer', 'integer'],
          ['integer', 'integer'],
        ],
      );
      assert.equal(
        db.prepare('SELECT updated_at FROM batches WHERE id = 2').pluck().get(),
        Date.parse(T[2]!),
      );
      assert.deepEqual(db.prepare(RECIPIENTS).all(), recipientsBefore);
      assert.deepEqual(requestTiming(journal, 1), {
        requests: 2,
        first_send: T[0],
        last_send: T[2],
      });
      const columns = ['id', 'batch_id', 'req_id', 'started_at', 'finished_at', 'outcome'];
      const dumped = columns.map((c) => readableColumn('attempts', c)).join(', ');
      assert.deepEqual(
        db.prepare(`SELECT ${dumped}, status_code, reason FROM attempts ORDER BY id`).all(),
        dumpBefore,
      );
      assert.deepEqual(db.pragma('foreign_key_check'), []);
      assert.equal(db.pragma('foreign_keys', { simple: true }), 1);
      assert.equal(db.pragma('legacy_alter_table', { simple: true }), 0);
      const indexes = db
        .prepare(
          "SELECT name FROM sqlite_schema WHERE type = 'index' AND tbl_name IN ('attempts', 'batches') AND sql IS NOT NULL ORDER BY name",
        )
        .pluck()
        .all();
      assert.deepEqual(indexes, [
        'attempts_by_batch',
        'attempts_by_finished',
        'attempts_by_start',
        'batches_by_file',
        'batches_held',
      ]);
    } finally {
      journal.close();
    }
  });
});
