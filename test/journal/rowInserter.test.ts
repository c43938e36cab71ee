// Intake's rows go in many to a statement (rowInserter.ts). What must hold: every row is written
// once, in the order added, and a row that asked for its id is told the id it really has (doubts
// are settled by those ids at the end of the file).
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  createRowInserter,
  ROWS_PER_STATEMENT,
  type RowValues,
} from '../../src/journal/rowInserter.js';
import { journalWithOneGroup } from './fixture.js';
import { sqliteOf } from './sqliteOf.js';

const valid = (line: number): RowValues => [
  line,
  `138 0000 ${line}`,
  `1380000${line}`,
  1,
  'valid',
  null,
  null,
  null,
  null,
];

describe('rows written many to a statement', () => {
  it('writes every row once, in order, and tells each asker its own id, in full statements and the rest', () => {
    const { db } = journalWithOneGroup('smsdrop-inserter-', {
      status: 'intake',
      createdAt: '2026-11-24T00:00:00.000Z',
    });
    sqliteOf(db).exec(
      "INSERT INTO rows (file_id, line, phone_raw, intake) VALUES (1, 1, 'x', 'invalid')",
    ); // ids do not start at 1
    const rowsOut = createRowInserter(db, 1);
    const told = new Map<number, number>();
    const count = ROWS_PER_STATEMENT * 2 + 7; // two full statements and a rest
    for (let line = 2; line < 2 + count; line++) {
      const askId = line % 3 === 0 || line === 2 + count - 1;
      rowsOut.add(valid(line), askId ? (id) => told.set(line, id) : undefined);
    }
    rowsOut.flush();
    const written = sqliteOf(db)
      .prepare('SELECT id, line, phone FROM rows WHERE line > 1 ORDER BY id')
      .all() as { id: number; line: number; phone: string }[];
    assert.deepEqual(
      written.map((r) => r.line),
      Array.from({ length: count }, (_, i) => i + 2),
      'each row once, ids in the order added',
    );
    assert.ok(told.size > count / 3);
    for (const [line, id] of told)
      assert.equal(written.find((r) => r.id === id)?.line, line, `line ${line} told id ${id}`);
  });

  it('drop forgets the queued rows and their askers', () => {
    const { db } = journalWithOneGroup('smsdrop-inserter-', {
      status: 'intake',
      createdAt: '2026-11-24T00:00:00.000Z',
    });
    const rowsOut = createRowInserter(db, 1);
    let asked = 0;
    for (let line = 2; line < 12; line++) rowsOut.add(valid(line), () => asked++);
    rowsOut.drop();
    rowsOut.flush();
    assert.equal(sqliteOf(db).prepare('SELECT count(*) FROM rows').pluck().get(), 0);
    assert.equal(asked, 0);
    rowsOut.add(valid(20), () => asked++);
    rowsOut.flush();
    assert.equal(asked, 1, 'the inserter goes on after a drop');
  });
});
