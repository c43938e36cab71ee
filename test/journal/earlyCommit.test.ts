// While the senders wait for a batch and the group counts are not in, intake commits the batches
// they wait for early (the file's first batch at once, then every ROWS_BETWEEN_EARLY_COMMITS rows
// at most) instead of when its bulk transaction is full: a batch may go only once a commit holds it
// (journal/intents.ts), and early in a file the bulk commits came 0.2-0.5 s apart while the senders
// sat idle.
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, it } from 'node:test';
import { GroupCounts } from '../../src/intake/groupCounts.js';
import { createFile } from '../../src/journal/files.js';
import { enableIntents } from '../../src/journal/intents.js';
import { openJournal } from '../../src/journal/open.js';
import { ROWS_BETWEEN_EARLY_COMMITS } from '../../src/plan/releaseNotices.js';
import type { RowToJournal } from '../../src/plan/rowWriter.js';
import { plannedRow, planWriter } from './planWriter.js';
import { sqliteOf } from './sqliteOf.js';

const row = (k: number): RowToJournal => plannedRow(k + 2, `138${String(k).padStart(8, '0')}`);

// The bulk transaction commits first after 5,000 rows (its first size, journal/bulk.ts), then after
// 10,000 more. With the senders waiting, the chunk that closes the file's first batch (its 200th
// row) is committed, then ROWS_BETWEEN_EARLY_COMMITS (5,000) rows later the next early commit.
const ROWS = 2 * ROWS_BETWEEN_EARLY_COMMITS + 100;
const BATCHES_BY_THE_FIRST_COMMIT = ROWS_BETWEEN_EARLY_COMMITS / 200;
const CHUNK = 100;

/** The rows as a file, and its group counts (started: not in until the event loop turns). */
function countedFile(): { dir: string; counts: GroupCounts } {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'smsdrop-early-'));
  const csv = path.join(dir, 'e.csv');
  const lines = Array.from({ length: ROWS }, (_, k) => `${row(k).phone},1,app,a`);
  writeFileSync(csv, ['phone,templateId,appId,参数1', ...lines].join('\n'));
  return { dir, counts: GroupCounts.start(csv, { encoding: 'utf-8', allowInternational: false }) };
}

/** Writes the first `rows` rows: the batches due then, and the releases told. */
function intake(dir: string, counts: GroupCounts, sendersWaiting: boolean, rows = ROWS) {
  const db = openJournal(path.join(dir, 'journal.sqlite'));
  enableIntents(db);
  const file = createFile(db, {
    sha256: 'e',
    name: 'e.csv',
    path: '/e.csv',
    size: 1,
    encoding: 'utf-8',
  });
  let releases = 0;
  const writer = planWriter(db, file.id, {
    maxPerRequest: 200,
    onRelease: () => releases++,
    sendersWaiting: () => sendersWaiting,
    groupCounts: counts,
  });
  for (let k = 0; k < rows; k += CHUNK)
    writer.write(Array.from({ length: CHUNK }, (_, i) => row(k + i)));
  const due = sqliteOf(db)
    .prepare('SELECT count(*) FROM batches WHERE file_id = ? AND next_attempt_at = 0')
    .pluck()
    .get(file.id);
  db.close();
  return { due, releases };
}

describe('commits for waiting senders', () => {
  it("commits the file's first batch as soon as it closes, and releases it a chunk later", async () => {
    const { dir, counts } = countedFile();
    // The chunk of rows 201-300 follows the one that filled the first batch.
    const { due, releases } = intake(dir, counts, true, 300);
    assert.equal(counts.ready, false, 'the rows were written before the counts were in');
    assert.equal(due, 1, 'the first batch is due before the 5,000th row');
    assert.equal(releases, 1);
    await counts.stop();
  });

  it('commits the closed batches once the senders wait, and releases them a chunk later', async () => {
    const { dir, counts } = countedFile();
    const { due, releases } = intake(dir, counts, true);
    assert.equal(counts.ready, false, 'the rows were written before the counts were in');
    // The first batch, then every batch filled by the early commit 5,000 rows after it.
    assert.equal(
      due,
      1 + BATCHES_BY_THE_FIRST_COMMIT,
      'every batch filled before the early commit',
    );
    assert.ok(releases > 1);
    await counts.stop();
  });

  it('leaves them for the bulk commit while the senders have work', async () => {
    const { dir, counts } = countedFile();
    const { due, releases } = intake(dir, counts, false);
    assert.equal(due, BATCHES_BY_THE_FIRST_COMMIT, 'the second bulk commit comes later');
    assert.equal(releases, 1);
    await counts.stop();
  });

  it('once the group counts are in, commits once more for them, then leaves them for the bulk commits', async () => {
    const { dir, counts } = countedFile();
    await counts.done;
    assert.equal(counts.ready, true);
    const { due } = intake(dir, counts, true);
    // The commit made when the counts came in held the first batch (closed by the second chunk);
    // the next bulk commit comes 10,000 rows after it.
    assert.equal(due, 1);
  });
});
