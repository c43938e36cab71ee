// Settling a file's doubts reads all its rows once (journal/placedRows.ts). A large file is read on
// the journal's thread when the process has one (the process that sends), else a page at a time
// with turns of the event loop between, so the answers of requests in flight are read meanwhile; a
// small one at once. All must settle the same way: each repeat a duplicate of its number's first
// row, every number in one batch.
import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import os from 'node:os';
import { SQLITE_DIALECT } from '../../src/journal/rules.js';
import path from 'node:path';
import { describe, it } from 'node:test';
import {
  startCheckpoints,
  stopCheckpoints,
  threadRequests,
} from '../../src/journal/checkpoints.js';
import { insideOf } from '../../src/journal/connection.js';
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

/**
 * Writes the rows in chunks of 100; finishes, counting the turns the event loop had meanwhile.
 * `thread`: the journal has its thread ('on'), or has it until the look-up is asked of it ('ends').
 */
async function intake(rows: RowToJournal[], thread?: 'on' | 'ends') {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'smsdrop-placed-'));
  const db = openJournal(path.join(dir, 'journal.sqlite'));
  const file = createFile(db, {
    sha256: 's',
    name: 's.csv',
    path: '/s.csv',
    size: 1,
    encoding: 'utf-8',
  });
  if (thread) startCheckpoints(db, 'normal');
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
  const asked = threadRequests(db);
  if (thread === 'ends') void insideOf(db).checkpoints?.worker.terminate();
  let counts: unknown;
  let requests: number;
  try {
    counts = await finishing;
  } finally {
    finished = true; // a failed finish ends the ticks too
    requests = threadRequests(db);
    await stopCheckpoints(db);
  }
  return { db, fileId: file.id, finishing, counts, turns, asked, requests };
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
        `SELECT ${SQLITE_DIALECT.batchPhones('b')} FROM batches b WHERE b.file_id = ? AND ${SQLITE_DIALECT.batchPhones('b')} IS NOT NULL`,
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

  it("is read on the journal's thread when the journal has one", async () => {
    const numbers = ROWS_PER_PAGE + 5_000;
    const { db, fileId, finishing, counts, asked, requests } = await intake(
      listWithRepeats(numbers),
      'on',
    );
    assert.ok(finishing instanceof Promise, 'finish waits for the thread');
    assert.ok(asked >= 1, 'the look-up was asked of the thread');
    assert.ok(requests >= 3, 'its doubts, its pages, then the end of its table');
    assert.equal((counts as { duplicates: number }).duplicates, numbers / 50);
    assertSettled(db, fileId, numbers);
  });

  it("is read on the main thread when the journal's thread ends while asked", async () => {
    const numbers = ROWS_PER_PAGE + 5_000;
    const { db, fileId, counts, asked } = await intake(listWithRepeats(numbers), 'ends');
    assert.ok(asked >= 1, 'the look-up was asked of the thread');
    assert.equal(insideOf(db).checkpoints, undefined, 'the thread is gone');
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
