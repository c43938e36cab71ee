// Settling a file's doubts reads all its rows once (journal/placedRows.ts). A large file is read a
// page at a time with turns of the event loop between, so the answers of requests in flight are
// read meanwhile; a small one at once. Both must settle the same way: each repeat a duplicate of
// its number's first row, every number in one batch.
import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, it } from 'node:test';
import { createFile } from '../../src/journal/files.js';
import { openJournal } from '../../src/journal/open.js';
import { ROWS_PER_PAGE } from '../../src/journal/placedRows.js';
import type { RowToJournal } from '../../src/plan/rowWriter.js';
import { plannedRow as row, planWriter } from './planWriter.js';
import { sqliteOf } from './sqliteOf.js';

const phoneOf = (k: number) => `13${String((k * 7_919_993) % 1_000_000_000).padStart(9, '0')}`;

/** `numbers` distinct numbers, then every 50th of them again: the repeats are the doubts. */
function listWithRepeats(numbers: number): RowToJournal[] {
  const rows: RowToJournal[] = [];
  for (let k = 0; k < numbers; k++) rows.push(row(rows.length + 2, phoneOf(k)));
  for (let k = 0; k < numbers; k += 50) rows.push(row(rows.length + 2, phoneOf(k)));
  return rows;
}

/** Writes the rows in chunks of 100; finishes, counting the turns the event loop had meanwhile. */
async function intake(rows: RowToJournal[]) {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'smsdrop-placed-'));
  const db = openJournal(path.join(dir, 'journal.sqlite'));
  const file = createFile(db, {
    sha256: 's',
    name: 's.csv',
    path: '/s.csv',
    size: 1,
    encoding: 'utf-8',
  });
  const writer = planWriter(db, file.id, { maxPerRequest: 200, fileBytes: rows.length * 30 });
  for (let i = 0; i < rows.length; i += 100) writer.write(rows.slice(i, i + 100));
  let turns = 0;
  let finished = false;
  const tick = () => {
    if (finished) return;
    turns++;
    setImmediate(tick);
  };
  setImmediate(tick);
  const finishing: unknown = writer.finish();
  const counts = await finishing;
  finished = true;
  return { db, fileId: file.id, finishing, counts, turns };
}

/** Each repeat is a duplicate of its number's first row; the batches hold every number once. */
function assertSettled(db: ReturnType<typeof openJournal>, fileId: number, numbers: number): void {
  const rows = sqliteOf(db)
    .prepare('SELECT id, phone, intake, duplicate_of FROM rows WHERE file_id = ? ORDER BY line')
    .raw()
    .all(fileId) as Array<[number, string, string, number | null]>;
  const firstOf = new Map<string, number>();
  let wrong = 0;
  for (const [id, phone, intake, duplicateOf] of rows) {
    const first = firstOf.get(phone);
    if (first === undefined) firstOf.set(phone, id);
    if (first === undefined ? intake !== 'valid' : intake !== 'duplicate' || duplicateOf !== first)
      wrong++;
  }
  assert.equal(wrong, 0, 'the first row of a number is valid, every repeat a duplicate of it');
  const inBatches = (
    sqliteOf(db)
      .prepare(
        'SELECT n.phones FROM batch_numbers n JOIN batches b ON b.id = n.batch_id WHERE b.file_id = ?',
      )
      .pluck()
      .all(fileId) as string[]
  ).flatMap((p) => p.split(','));
  assert.equal(inBatches.length, numbers);
  assert.equal(new Set(inBatches).size, numbers, 'every number once');
}

describe('settling the doubts of a file', () => {
  it('reads a file of more than a page a page at a time, with turns of the event loop between', async () => {
    const numbers = ROWS_PER_PAGE + 5_000;
    const { db, fileId, finishing, counts, turns } = await intake(listWithRepeats(numbers));
    assert.ok(finishing instanceof Promise, 'finish waits for the pages');
    assert.ok(turns >= 2, `the event loop had ${turns} turns while the doubts were looked up`);
    assert.equal((counts as { duplicates: number }).duplicates, numbers / 50);
    assertSettled(db, fileId, numbers);
  });

  it('reads a file of less than a page at once: nothing to await', async () => {
    const numbers = 5_000;
    const { db, fileId, finishing, counts } = await intake(listWithRepeats(numbers));
    assert.ok(!(finishing instanceof Promise));
    assert.equal((counts as { duplicates: number }).duplicates, numbers / 50);
    assertSettled(db, fileId, numbers);
  });
});
