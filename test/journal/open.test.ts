// How the journal is opened: WAL (readers never wait for the writer), and checkpoints every
// WAL_CHECKPOINT_PAGES pages. With SQLite's 1,000, a run sending a list in random order ran a
// checkpoint, with its two fsyncs, after nearly every commit (see open.ts); this test keeps the
// setting from quietly going back (walBound.test.ts keeps it from growing the WAL).
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, describe, it } from 'node:test';
import { openJournal, WAL_CHECKPOINT_PAGES, WAL_SIZE_LIMIT_BYTES } from '../../src/journal/open.js';
import { sqliteOf } from './sqliteOf.js';

const dir = mkdtempSync(path.join(os.tmpdir(), 'smsdrop-open-'));
after(() => rmSync(dir, { recursive: true, force: true }));

describe('openJournal', () => {
  it('uses WAL and leaves 1,000-page commits in the WAL instead of checkpointing after each', () => {
    const file = path.join(dir, 'journal.sqlite');
    const db = openJournal(file);
    try {
      assert.equal(sqliteOf(db).pragma('journal_mode', { simple: true }), 'wal');
      assert.equal(
        sqliteOf(db).pragma('wal_autocheckpoint', { simple: true }),
        WAL_CHECKPOINT_PAGES,
      );
      assert.ok(WAL_CHECKPOINT_PAGES > 3000);
      assert.equal(
        sqliteOf(db).pragma('journal_size_limit', { simple: true }),
        WAL_SIZE_LIMIT_BYTES,
      );
      sqliteOf(db).exec('CREATE TABLE scratch (filler BLOB NOT NULL)');
      const insert = sqliteOf(db).prepare('INSERT INTO scratch (filler) VALUES (zeroblob(3000))');
      // Three commits of ~1,000 pages each: with the default, each would have been checkpointed
      // back into the database file, so the file would hold them all.
      const commitPages = sqliteOf(db).transaction(() => {
        for (let i = 0; i < 1000; i++) insert.run();
      });
      for (let commit = 0; commit < 3; commit++) commitPages();
      const pageSize = sqliteOf(db).pragma('page_size', { simple: true }) as number;
      assert.ok(statSync(`${file}-wal`).size > 2500 * pageSize, 'the commits are still in the WAL');
      assert.ok(statSync(file).size < 100 * pageSize, 'and not yet copied into the database file');
    } finally {
      db.close();
    }
  });

  it('waits for the disk at each commit as SMSDROP_JOURNAL_SYNC says: NORMAL by default, or FULL', () => {
    // SQLite's numbers for the setting: 1 NORMAL, 2 FULL.
    for (const [name, setting, level] of [
      ['default.sqlite', undefined, 1],
      ['normal.sqlite', 'normal', 1],
      ['full.sqlite', 'full', 2],
    ] as const) {
      const db = openJournal(path.join(dir, name), setting ? { synchronous: setting } : {});
      try {
        assert.equal(sqliteOf(db).pragma('synchronous', { simple: true }), level, name);
      } finally {
        db.close();
      }
    }
  });
});
