// The write queue's promise: a write is on disk (seen by another connection) when its promise
// settles, also while an intake holds a bulk transaction open, and a turn whose write fails
// settles none of its writes as done.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, describe, it } from 'node:test';
import Database from '../../src/journal/sqlite.js';
import { bulkLosses, bulkWrite, commitBulk, RowsLostError } from '../../src/journal/bulk.js';
import { createFile } from '../../src/journal/files.js';
import { planWriter } from './planWriter.js';
import { openJournal } from '../../src/journal/open.js';
import { writeQueueFor } from '../../src/journal/writeQueue.js';
import { sqliteOf } from './sqliteOf.js';

const dir = mkdtempSync(path.join(os.tmpdir(), 'smsdrop-write-queue-'));
const file = path.join(dir, 'journal.sqlite');
const db = openJournal(file);
sqliteOf(db).exec('CREATE TABLE scratch (what TEXT NOT NULL)');
const reader = new Database(file, { readonly: true });
after(() => {
  reader.close();
  db.close();
  rmSync(dir, { recursive: true, force: true });
});

const insert = (what: string) => () =>
  sqliteOf(db).prepare('INSERT INTO scratch (what) VALUES (?)').run(what).changes;
const seen = () =>
  reader.prepare('SELECT what FROM scratch ORDER BY rowid').pluck().all() as string[];
const clear = () => {
  commitBulk(db);
  sqliteOf(db).exec('DELETE FROM scratch');
};

describe('the journal write queue', () => {
  it('settles a write once it is committed, with the rows an intake wrote before it', async () => {
    clear();
    bulkWrite(db, 1, insert('row 1'));
    const attempt = writeQueueFor(db).run(insert('attempt'));
    assert.deepEqual(seen(), [], 'nothing is committed before the turn ends');
    assert.equal(await attempt, 1);
    assert.deepEqual(seen(), ['row 1', 'attempt']);
    assert.equal(sqliteOf(db).inTransaction, false);
    // The intake goes on in a new bulk transaction.
    bulkWrite(db, 1, insert('row 2'));
    commitBulk(db);
    assert.deepEqual(seen(), ['row 1', 'attempt', 'row 2']);
  });

  it('commits the intake rows and the writes of a turn once, not once each', async () => {
    clear();
    sqliteOf(db).pragma('wal_checkpoint(TRUNCATE)'); // an empty WAL: each commit now adds the pages it wrote
    bulkWrite(db, 1, insert('row'));
    await writeQueueFor(db).run(insert('attempt'));
    // Both rows are on the table's one page: one commit writes it once, two would write it twice.
    const [{ log }] = sqliteOf(db).pragma('wal_checkpoint(PASSIVE)') as [{ log: number }];
    assert.equal(log, 1);
  });

  it('runs the writes asked for in one turn together, in order', async () => {
    clear();
    const queue = writeQueueFor(db);
    const writes = [queue.run(insert('a')), queue.run(insert('b')), queue.run(insert('c'))];
    assert.equal(queue.waiting(), true);
    await Promise.all(writes);
    assert.equal(queue.waiting(), false);
    assert.deepEqual(seen(), ['a', 'b', 'c']);
  });

  it('settles no write of a turn as done when one of them fails, and keeps the intake rows', async () => {
    clear();
    bulkWrite(db, 1, insert('row 1'));
    const queue = writeQueueFor(db);
    const good = queue.run(insert('outcome'));
    const bad = queue.run(() => {
      throw new Error('disk trouble');
    });
    await assert.rejects(good, /disk trouble/);
    await assert.rejects(bad, /disk trouble/);
    commitBulk(db);
    assert.deepEqual(seen(), ['row 1'], 'the failed turn is rolled back, the intake row is kept');
    assert.equal(await queue.run(insert('next turn')), 1);
    assert.deepEqual(seen(), ['row 1', 'next turn']);
  });

  it('tells the intake when a failed write rolled back its whole transaction (a full disk)', async () => {
    clear();
    const before = bulkLosses(db);
    bulkWrite(db, 1, insert('row'));
    const doomed = writeQueueFor(db).run(() => {
      sqliteOf(db).exec('ROLLBACK'); // what SQLite does by itself on SQLITE_FULL or an I/O error
      throw new Error('database or disk is full');
    });
    await assert.rejects(doomed, /disk is full/);
    assert.equal(bulkLosses(db), before + 1);
    assert.equal(sqliteOf(db).inTransaction, false);
    assert.deepEqual(seen(), []);
    assert.equal(await writeQueueFor(db).run(insert('next turn')), 1);
    assert.deepEqual(seen(), ['next turn']);
  });

  it('never leaves a transaction open after a commit that failed, so later writes are committed', async () => {
    clear();
    // A deferred foreign key makes COMMIT fail and leave the transaction open (as SQLITE_BUSY
    // would).
    sqliteOf(db).exec(
      'CREATE TABLE IF NOT EXISTS parent (id INTEGER PRIMARY KEY); CREATE TABLE IF NOT EXISTS child (pid INTEGER REFERENCES parent(id) DEFERRABLE INITIALLY DEFERRED)',
    );
    sqliteOf(db).pragma('foreign_keys = ON');
    try {
      const before = bulkLosses(db);
      bulkWrite(db, 1, () => sqliteOf(db).prepare('INSERT INTO child (pid) VALUES (999)').run());
      await assert.rejects(writeQueueFor(db).run(insert('attempt')), /FOREIGN KEY/);
      assert.equal(sqliteOf(db).inTransaction, false);
      assert.equal(bulkLosses(db), before + 1);
      assert.equal(await writeQueueFor(db).run(insert('next turn')), 1);
      assert.deepEqual(
        seen(),
        ['next turn'],
        'committed, not a savepoint of a transaction left open',
      );
    } finally {
      sqliteOf(db).pragma('foreign_keys = OFF');
    }
  });

  it('stops a row writer whose rows were rolled back', async () => {
    clear();
    const file = createFile(db, {
      sha256: 'f'.repeat(64),
      name: 'lost.csv',
      path: '/in/lost.csv',
      size: 1,
      encoding: 'utf-8',
    });
    const writer = planWriter(db, file.id, { maxPerRequest: 200 });
    const row = (line: number) => ({
      line,
      phoneRaw: `1380000000${line}`,
      phone: `1380000000${line}`,
      appId: 'app',
      templateId: '1',
      datas: [],
      extras: [],
    });
    writer.write([row(2), row(3)]);
    await assert.rejects(
      writeQueueFor(db).run(() => {
        sqliteOf(db).exec('ROLLBACK');
        throw new Error('disk I/O error');
      }),
    );
    assert.throws(() => writer.write([row(4)]), RowsLostError);
    assert.throws(() => writer.finish(), /rolled back rows of this file/);
    const numbersBefore = sqliteOf(db).prepare('SELECT count(*) FROM batch_numbers').pluck().get();
    writer.abandon(); // writes nothing: its open batch went with the rows
    commitBulk(db);
    assert.equal(
      sqliteOf(db).prepare('SELECT count(*) FROM batch_numbers').pluck().get(),
      numbersBefore,
    );
  });
});
