// A group's last batch is held past its last row while a doubt of that group is unsettled: read
// inside the SQLite journal's intake transaction, as the planner leaves it between chunks, on the
// planner's own connection. The rest of the doubts' rules (plan/seenNumbers.ts) are in
// test/conformance/doubts.test.ts, on both journals.
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, it } from 'node:test';
import { countGroups } from '../../src/intake/groupCounts.js';
import { createFile } from '../../src/journal/files.js';
import { openJournal } from '../../src/journal/open.js';
import { SeenNumbers } from '../../src/plan/seenNumbers.js';
import { plannedRow as row, planWriter } from './planWriter.js';
import { sqliteOf } from './sqliteOf.js';

const phoneOf = (k: number) => `13${String((k * 7_919_993) % 1_000_000_000).padStart(9, '0')}`;

describe('one valid row per (group, number) without an index by number', () => {
  it("keeps a group's last batch held past its last row while a doubt of that group is unsettled", async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'smsdrop-seen-'));
    const csv = path.join(dir, 'g.csv');
    const rows = [
      row(2, phoneOf(1), 'a'),
      row(3, phoneOf(2), 'b'),
      row(4, phoneOf(3), 'a'),
      row(5, phoneOf(1), 'a'),
      row(6, phoneOf(4), 'b'),
      row(7, phoneOf(9), 'b'),
    ];
    writeFileSync(
      csv,
      ['phone,templateId,appId,参数1', ...rows.map((r) => `${r.phone},1,app,${r.datas[0]}`)].join(
        '\n',
      ),
    );
    const groupCounts = await countGroups(csv, { encoding: 'utf-8', allowInternational: false });
    assert.ok(groupCounts);
    const db = openJournal(path.join(dir, 'journal.sqlite'));
    const file = createFile(db, {
      sha256: 'g',
      name: 'g.csv',
      path: csv,
      size: 1,
      encoding: 'utf-8',
    });
    // One bit: each group's first number is placed, every later one is a doubt.
    const writer = planWriter(db, file.id, {
      maxPerRequest: 200,
      groupCounts,
      seenNumbers: new SeenNumbers(1),
    });
    const state = () =>
      sqliteOf(db)
        .prepare(
          "SELECT g.datas, b.numbers, CASE WHEN b.next_attempt_at = 0 THEN 'due' ELSE 'held' END FROM batches b JOIN groups g ON g.id = b.group_id ORDER BY b.id",
        )
        .raw()
        .all();
    writer.write(rows.slice(0, 4)); // a's last row is line 5
    writer.write(rows.slice(4, 5));
    writer.write(rows.slice(5));
    assert.deepEqual(
      state(),
      [
        ['["a"]', 1, 'held'],
        ['["b"]', 1, 'held'],
      ],
      'a and b have ended, but with doubts: their batches wait for them',
    );
    const counts = writer.finish();
    assert.deepEqual(
      state(),
      [
        ['["a"]', 2, 'due'],
        ['["b"]', 3, 'due'],
      ],
      'one request per group, with every new number',
    );
    assert.equal(counts.duplicates, 1);
  });
});
