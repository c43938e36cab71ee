// Intake holds a batch while it can take numbers and releases it (due now) once full, one chunk
// later: so a batch's rows are always followed by more of the file when sending may see it.
import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, it } from 'node:test';
import { HELD } from '../../src/journal/batches.js';
import { createFile } from '../../src/journal/files.js';
import { openJournal } from '../../src/journal/open.js';
import { createRowWriter, type RowToJournal } from '../../src/journal/rows.js';

const row = (line: number, phone: string, value: string): RowToJournal => ({ line, phoneRaw: phone, phone, appId: 'app', templateId: '1', datas: [value], extras: {} });

describe('batch release during intake', () => {
  it('holds a part-full batch, releases a full one when the next chunk is written, releases the rest at finish', () => {
    const db = openJournal(path.join(mkdtempSync(path.join(os.tmpdir(), 'smsdrop-release-')), 'journal.sqlite'));
    const file = createFile(db, { sha256: 'r', name: 'r.csv', path: '/r.csv', size: 1, encoding: 'utf-8' });
    let releases = 0;
    const writer = createRowWriter(db, file.id, { maxPerRequest: 2, onRelease: () => releases++ });
    const due = () => db.prepare('SELECT next_attempt_at = 0 FROM batches WHERE file_id = ? ORDER BY id').pluck().all(file.id);

    writer.write([row(2, '13800000001', 'a'), row(3, '13800000002', 'a'), row(4, '13800000003', 'b')]);
    assert.deepEqual(due(), [0, 0], 'a is full, but its chunk may be the end of a growing file');
    assert.equal(releases, 0);
    assert.equal(db.prepare('SELECT max(next_attempt_at) FROM batches').pluck().get(), HELD);

    writer.write([row(5, '13800000004', 'b')]);
    assert.deepEqual(due(), [1, 0], 'a released once more of the file was written; b just filled');
    assert.equal(releases, 1);

    writer.finish();
    assert.deepEqual(due(), [1, 1]);
    assert.deepEqual(db.prepare('SELECT numbers FROM batches WHERE file_id = ? ORDER BY id').pluck().all(file.id), [2, 2]);
  });
});
