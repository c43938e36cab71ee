// An intake cut short and read again keeps the file's groups and uses them again: deleting them
// scanned the whole rows table per group (the foreign key of rows.group_id has no index of its
// own), so a file of thousands of groups stopped while it was read took tens of seconds to start
// again, deaf to SIGTERM. What is checked here is the shape that avoids it: no group is deleted,
// and the second intake makes none.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, describe, it } from 'node:test';
import { createFile, discardIntake, restartIntake } from '../../src/journal/files.js';
import type { Journal } from '../../src/journal/connection.js';
import { openJournal } from '../../src/journal/open.js';
import { planWriter } from './planWriter.js';
import type { RowToJournal } from '../../src/plan/rowWriter.js';
import { sqliteOf } from './sqliteOf.js';

const dir = mkdtempSync(path.join(os.tmpdir(), 'smsdrop-restart-'));
const db: Journal = openJournal(path.join(dir, 'journal.sqlite'));
after(() => {
  db.close();
  rmSync(dir, { recursive: true, force: true });
});

/** 300 rows in 100 groups of three numbers. */
const rows: RowToJournal[] = Array.from({ length: 300 }, (_, i) => ({
  line: i + 2,
  phoneRaw: `1380000${String(i).padStart(4, '0')}`,
  phone: `1380000${String(i).padStart(4, '0')}`,
  appId: 'app',
  templateId: '1',
  datas: [`group${i % 100}`],
  extras: [],
}));
const groupIds = (fileId: number) =>
  sqliteOf(db)
    .prepare('SELECT id FROM groups WHERE file_id = ? ORDER BY id')
    .pluck()
    .all(fileId) as number[];

function readInto(fileId: number, upTo: number): void {
  const writer = planWriter(db, fileId, { maxPerRequest: 200 });
  writer.write(rows.slice(0, upTo));
  if (upTo === rows.length) writer.finish();
  else writer.abandon();
}

describe('an intake cut short, then read again', () => {
  for (const [name, clear] of [
    ['restartIntake', restartIntake],
    ['discardIntake', discardIntake],
  ] as const) {
    it(`${name} keeps the file's groups, and the second intake uses them again`, () => {
      const file = createFile(db, {
        sha256: name.padEnd(64, '0'),
        name,
        path: `/in/${name}.csv`,
        size: 1,
        encoding: 'utf-8',
      });
      readInto(file.id, 150);
      const before = groupIds(file.id);
      assert.equal(before.length, 100);
      clear(db, file.id);
      assert.deepEqual(groupIds(file.id), before, 'no group deleted');
      assert.equal(
        sqliteOf(db).prepare('SELECT count(*) FROM rows WHERE file_id = ?').pluck().get(file.id),
        0,
        'the rows are gone',
      );
      readInto(file.id, 300);
      assert.deepEqual(groupIds(file.id), before, 'no group made again');
      assert.equal(
        sqliteOf(db).prepare('SELECT count(*) FROM rows WHERE file_id = ?').pluck().get(file.id),
        300,
      );
    });
  }
});
