// An idle daemon gives back the journal's page caches (src/journal/releaseMemory.ts): what a
// release frees is only cache, so the journal reads the same after it, and a transaction open at
// the time is left as it was, still open and still holding its rows.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, describe, it } from 'node:test';
import { openJournal } from '../../src/journal/open.js';
import { releaseCaches } from '../../src/journal/releaseMemory.js';
import { sqliteOf } from './sqliteOf.js';

const dir = mkdtempSync(path.join(os.tmpdir(), 'smsdrop-release-caches-'));
after(() => rmSync(dir, { recursive: true, force: true }));

describe('releaseCaches', () => {
  it('leaves what the journal holds, committed or in an open transaction, as it was', () => {
    const db = openJournal(path.join(dir, 'journal.sqlite'));
    try {
      const sqlite = sqliteOf(db);
      sqlite.exec('CREATE TABLE scratch (n INTEGER NOT NULL, filler BLOB NOT NULL)');
      const insert = sqlite.prepare('INSERT INTO scratch (n, filler) VALUES (?, zeroblob(2000))');
      sqlite.transaction(() => {
        for (let n = 0; n < 2000; n++) insert.run(n);
      })();
      const sum = sqlite.prepare('SELECT count(*) AS rows, sum(n) AS total FROM scratch');
      const before = sum.get();
      releaseCaches(db);
      assert.deepEqual(sum.get(), before);

      sqlite.exec('BEGIN IMMEDIATE');
      insert.run(2000);
      releaseCaches(db);
      assert.equal(sqlite.inTransaction, true, 'the open transaction is left open');
      sqlite.exec('COMMIT');
      assert.deepEqual(sum.get(), { rows: 2001, total: 2001000 });
    } finally {
      db.close();
    }
  });

  it('does nothing to a closed journal', () => {
    const db = openJournal(path.join(dir, 'closed.sqlite'));
    db.close();
    assert.doesNotThrow(() => releaseCaches(db));
  });
});
