// Intake holds a batch while it can take numbers and releases it (due now) once full, one chunk
// later: so a batch's rows are always followed by more of the file when sending may see it.
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, it } from 'node:test';
import { countGroups, GroupCounts } from '../../src/intake/groupCounts.js';
import { HELD } from '../../src/journal/batchNumbers.js';
import { SQLITE_DIALECT } from '../../src/journal/rules.js';
import { createFile } from '../../src/journal/files.js';
import { openJournal } from '../../src/journal/open.js';
import { plannedRow as row, planWriter } from './planWriter.js';
import { sqliteOf } from './sqliteOf.js';

describe('batch release during intake', () => {
  it('holds a part-full batch, releases a full one when the next chunk is written, releases the rest at finish', () => {
    const db = openJournal(
      path.join(mkdtempSync(path.join(os.tmpdir(), 'smsdrop-release-')), 'journal.sqlite'),
    );
    const file = createFile(db, {
      sha256: 'r',
      name: 'r.csv',
      path: '/r.csv',
      size: 1,
      encoding: 'utf-8',
    });
    let releases = 0;
    const writer = planWriter(db, file.id, { maxPerRequest: 2, onRelease: () => releases++ });
    const due = () =>
      sqliteOf(db)
        .prepare('SELECT next_attempt_at = 0 FROM batches WHERE file_id = ? ORDER BY id')
        .pluck()
        .all(file.id);

    writer.write([
      row(2, '13800000001', 'a'),
      row(3, '13800000002', 'a'),
      row(4, '13800000003', 'b'),
    ]);
    assert.deepEqual(due(), [0, 0], 'a is full, but its chunk may be the end of a growing file');
    assert.equal(releases, 0);
    assert.equal(
      sqliteOf(db).prepare('SELECT max(next_attempt_at) FROM batches').pluck().get(),
      HELD,
    );

    writer.write([row(5, '13800000004', 'b')]);
    assert.deepEqual(due(), [1, 0], 'a released once more of the file was written; b just filled');
    assert.equal(releases, 1);

    writer.finish();
    assert.deepEqual(due(), [1, 1]);
    assert.deepEqual(
      sqliteOf(db)
        .prepare('SELECT numbers FROM batches WHERE file_id = ? ORDER BY id')
        .pluck()
        .all(file.id),
      [2, 2],
    );
  });

  it("with the file's group counts, releases a group's part-full batch one chunk after its last row", async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'smsdrop-release-'));
    const csv = path.join(dir, 'r.csv');
    const lines = [
      'phone,templateId,appId,参数1',
      '13800000001,1,app,a',
      '13800000002,1,app,b',
      '13800000003,1,app,b',
      '13800000004,1,app,a',
    ];
    writeFileSync(csv, lines.join('\n'));
    const groupCounts = await countGroups(csv, { encoding: 'utf-8', allowInternational: false });
    assert.ok(groupCounts);
    const db = openJournal(path.join(dir, 'journal.sqlite'));
    const file = createFile(db, {
      sha256: 'c',
      name: 'r.csv',
      path: csv,
      size: 1,
      encoding: 'utf-8',
    });
    let releases = 0;
    const writer = planWriter(db, file.id, {
      maxPerRequest: 200,
      onRelease: () => releases++,
      groupCounts,
    });
    const due = () =>
      sqliteOf(db)
        .prepare(
          "SELECT CASE WHEN next_attempt_at = 0 THEN 'due' ELSE 'held' END FROM batches WHERE file_id = ? ORDER BY id",
        )
        .pluck()
        .all(file.id);

    writer.write([row(2, '13800000001', 'a'), row(3, '13800000002', 'b')]);
    writer.write([row(4, '13800000003', 'b')]);
    assert.deepEqual(due(), ['held', 'held'], 'b ended in this chunk: released with the next one');
    writer.write([row(5, '13800000004', 'a')]);
    assert.deepEqual(due(), ['held', 'due'], 'a takes its last row now, not before');
    assert.equal(releases, 1);
    writer.finish();
    assert.deepEqual(due(), ['due', 'due']);
    assert.deepEqual(
      sqliteOf(db)
        .prepare('SELECT numbers FROM batches WHERE file_id = ? ORDER BY id')
        .pluck()
        .all(file.id),
      [2, 2],
    );
  });

  it('with counts completed while intake read, releases the groups it had read in full by then', async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'smsdrop-release-'));
    const csv = path.join(dir, 'r.csv');
    writeFileSync(
      csv,
      [
        'phone,templateId,appId,参数1',
        '13800000001,1,app,a',
        '13800000002,1,app,b',
        '13800000003,1,app,c',
        '13800000004,1,app,b',
      ].join('\n'),
    );
    const groupCounts = GroupCounts.start(csv, { encoding: 'utf-8', allowInternational: false });
    const db = openJournal(path.join(dir, 'journal.sqlite'));
    const file = createFile(db, {
      sha256: 'l',
      name: 'r.csv',
      path: csv,
      size: 1,
      encoding: 'utf-8',
    });
    const writer = planWriter(db, file.id, { maxPerRequest: 200, groupCounts });
    const due = () =>
      sqliteOf(db)
        .prepare(
          "SELECT CASE WHEN next_attempt_at = 0 THEN 'due' ELSE 'held' END FROM batches WHERE file_id = ? ORDER BY id",
        )
        .pluck()
        .all(file.id);

    writer.write([row(2, '13800000001', 'a'), row(3, '13800000002', 'b')]); // before the count is complete
    assert.equal(groupCounts.ready, false);
    await groupCounts.done;
    writer.write([row(4, '13800000003', 'c')]);
    writer.write([row(5, '13800000004', 'b')]);
    assert.deepEqual(
      due(),
      ['due', 'held', 'due'],
      'a, read in full before the count was complete, goes with c; b just ended',
    );
    writer.finish();
    assert.deepEqual(due(), ['due', 'due', 'due']);
  });

  it('without counts, a part-full batch waits for the end of the file', () => {
    const db = openJournal(
      path.join(mkdtempSync(path.join(os.tmpdir(), 'smsdrop-release-')), 'journal.sqlite'),
    );
    const file = createFile(db, {
      sha256: 'n',
      name: 'n.csv',
      path: '/n.csv',
      size: 1,
      encoding: 'utf-8',
    });
    const writer = planWriter(db, file.id, { maxPerRequest: 200 });
    writer.write([row(2, '13800000001', 'a')]);
    writer.write([row(3, '13800000002', 'b')]);
    assert.equal(
      sqliteOf(db)
        .prepare('SELECT count(*) FROM batches WHERE file_id = ? AND next_attempt_at = 0')
        .pluck()
        .get(file.id),
      0,
    );
    writer.finish();
    assert.equal(
      sqliteOf(db)
        .prepare('SELECT count(*) FROM batches WHERE file_id = ? AND next_attempt_at = 0')
        .pluck()
        .get(file.id),
      2,
    );
  });

  it('never adds a row to a batch waiting for its release, even when the group counts were wrong', async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'smsdrop-release-'));
    const csv = path.join(dir, 'r.csv');
    const lines = [
      'phone,templateId,appId,参数1',
      '13800000001,1,app,a',
      '13800000002,1,app,a',
      '13800000003,1,app,a',
    ];
    writeFileSync(csv, lines.join('\n'));
    // Counts of the first data row only, as if the file had been rewritten after it was counted.
    const bytes = Buffer.byteLength(`${lines.slice(0, 2).join('\n')}\n`);
    const groupCounts = await countGroups(csv, {
      encoding: 'utf-8',
      allowInternational: false,
      bytes,
    });
    assert.ok(groupCounts);
    const db = openJournal(path.join(dir, 'journal.sqlite'));
    const file = createFile(db, {
      sha256: 'w',
      name: 'r.csv',
      path: csv,
      size: 1,
      encoding: 'utf-8',
    });
    const writer = planWriter(db, file.id, { maxPerRequest: 200, groupCounts });
    const batches = () =>
      sqliteOf(db)
        .prepare(
          `SELECT b.next_attempt_at = 0 AS due, ${SQLITE_DIALECT.batchPhones('b')} AS phones, (SELECT group_concat(r.phone) FROM rows r WHERE r.batch_id = b.id) AS rowPhones
           FROM batches b WHERE b.file_id = ? ORDER BY b.id`,
        )
        .all(file.id);
    writer.write([row(2, '13800000001'), row(3, '13800000002')]);
    writer.write([row(4, '13800000003')]);
    const [released, open] = batches() as {
      due: number;
      phones: string | null;
      rowPhones: string;
    }[];
    assert.deepEqual(
      released,
      { due: 1, phones: '13800000001', rowPhones: '13800000001' },
      'the released batch holds exactly its row',
    );
    assert.deepEqual(
      [open!.due, open!.rowPhones],
      [0, '13800000002,13800000003'],
      'the rows the count missed are in a new, held batch',
    );
    writer.finish();
    assert.deepEqual(batches(), [
      { due: 1, phones: '13800000001', rowPhones: '13800000001' },
      { due: 1, phones: '13800000002,13800000003', rowPhones: '13800000002,13800000003' },
    ]);
  });
});
