// One valid row per (group, number) without an index of rows by number: intake asks a Bloom filter
// (seenNumbers.ts), and the rows it cannot vouch for ("doubts") are settled from the journal when
// the file is read. Whatever the filter says, the journal must come out the same.
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, it } from 'node:test';
import { createFile } from '../../src/journal/files.js';
import type { Journal } from '../../src/journal/connection.js';
import { openJournal } from '../../src/journal/open.js';
import { plannedRow as row, planWriter } from '../journal/planWriter.js';
import type { RowToJournal } from '../../src/plan/rowWriter.js';
import { SeenNumbers } from '../../src/plan/seenNumbers.js';
import { countGroups } from '../../src/intake/groupCounts.js';
import pLimit from 'p-limit';
import { loadConfig } from '../../src/config/index.js';
import type { ProviderClient } from '../../src/provider/client.js';
import { sendFile } from '../../src/send/index.js';
import { AccountPause, createRateLimiter } from '../../src/send/rate.js';
import { SqliteSendStore } from '../../src/journal/sendStore.js';
import { sqliteOf } from '../journal/sqliteOf.js';

const freshJournal = (): Journal =>
  openJournal(path.join(mkdtempSync(path.join(os.tmpdir(), 'smsdrop-seen-')), 'journal.sqlite'));
const phoneOf = (k: number) => `13${String((k * 7_919_993) % 1_000_000_000).padStart(9, '0')}`;

/**
 * Rows in three groups, with repeats near and far (the same number in another group is no repeat).
 */
function listWithRepeats(): RowToJournal[] {
  const rows: RowToJournal[] = [];
  let line = 1;
  for (let k = 0; k < 300; k++) rows.push(row(++line, phoneOf(k), k % 3 === 0 ? 'a' : 'b'));
  for (let k = 0; k < 300; k += 7) rows.push(row(++line, phoneOf(k), k % 3 === 0 ? 'a' : 'b')); // far repeats
  for (let k = 0; k < 50; k++) rows.push(row(++line, phoneOf(k), 'c')); // same numbers, another group
  for (let k = 0; k < 50; k += 5)
    rows.push(row(++line, phoneOf(k), 'c'), row(++line, phoneOf(k), 'c')); // near repeats
  return rows;
}

/** A row's fate as journalled; inItsBatch is 1 when its batch holds its number. */
interface JournalledRow {
  line: number;
  intake: string;
  duplicateOfLine: number | null;
  datas: string;
  inItsBatch: number;
}

interface JournalledBatch {
  datas: string;
  numbers: number;
  due: number;
}

/** What intake made of the rows: each row's fate (by line), and each batch's numbers. */
function journalled(db: Journal, fileId: number) {
  const rows = sqliteOf(db)
    .prepare(
      `SELECT r.line, r.intake, d.line AS duplicateOfLine, g.datas, n.phones IS NOT NULL AND instr(',' || n.phones || ',', ',' || r.phone || ',') > 0 AS inItsBatch
       FROM rows r JOIN groups g ON g.id = r.group_id LEFT JOIN rows d ON d.id = r.duplicate_of LEFT JOIN batch_numbers n ON n.batch_id = r.batch_id
       WHERE r.file_id = ? ORDER BY r.line`,
    )
    .all(fileId) as JournalledRow[];
  const batches = sqliteOf(db)
    .prepare(
      'SELECT g.datas, b.numbers, b.next_attempt_at = 0 AS due FROM batches b JOIN groups g ON g.id = b.group_id WHERE b.file_id = ? ORDER BY g.datas, b.numbers DESC',
    )
    .all(fileId) as JournalledBatch[];
  const numbersSent = sqliteOf(db)
    .prepare(
      'SELECT n.phones FROM batch_numbers n JOIN batches b ON b.id = n.batch_id WHERE b.file_id = ?',
    )
    .pluck()
    .all(fileId) as string[];
  return { rows, batches, numbersSent: numbersSent.flatMap((p) => p.split(',')).sort() };
}

function intake(rows: RowToJournal[], seenNumbers?: SeenNumbers, chunk = 37) {
  const db = freshJournal();
  const file = createFile(db, {
    sha256: 's',
    name: 's.csv',
    path: '/s.csv',
    size: 1,
    encoding: 'utf-8',
  });
  const writer = planWriter(db, file.id, {
    maxPerRequest: 20,
    ...(seenNumbers ? { seenNumbers } : {}),
  });
  for (let i = 0; i < rows.length; i += chunk) writer.write(rows.slice(i, i + chunk));
  const counts = writer.finish();
  return { db, fileId: file.id, counts };
}

describe('SeenNumbers', () => {
  it('never says "not seen" for a number added to the group, and tells other groups apart', () => {
    const seen = SeenNumbers.forFile(12 * 50_000);
    for (let k = 0; k < 50_000; k++) seen.add(1 + (k % 5), phoneOf(k));
    for (let k = 0; k < 50_000; k++)
      assert.ok(seen.mayHave(1 + (k % 5), phoneOf(k)), `number ${k}`);
    let falseAlarms = 0;
    for (let k = 0; k < 50_000; k++) if (seen.mayHave(6 + (k % 5), phoneOf(k))) falseAlarms++;
    // Full to its size (a file of nothing but 12-byte numbers): about 2% by design.
    assert.ok(falseAlarms < 50_000 * 0.04, `${falseAlarms} false alarms in 50,000`);
  });
});

describe('SeenNumbers.addIfNew', () => {
  it('adds and says true exactly when mayHave said false, as mayHave then add did', () => {
    for (const bits of [1 << 16, 64]) {
      const one = new SeenNumbers(bits); // mayHave, then add when it said no
      const other = new SeenNumbers(bits); // addIfNew
      for (let k = 0; k < 2_000; k++) {
        const groupId = k % 5;
        const phone = phoneOf(k % 700);
        const wasNew = !one.mayHave(groupId, phone);
        if (wasNew) one.add(groupId, phone);
        assert.equal(other.addIfNew(groupId, phone), wasNew, `${bits} bits, k ${k}`);
      }
      for (let k = 0; k < 3_000; k++)
        assert.equal(other.mayHave(k % 7, phoneOf(k)), one.mayHave(k % 7, phoneOf(k)));
    }
  });
});

describe('one valid row per (group, number) without an index by number', () => {
  it('journals the same rows, duplicates and batches whether the filter is exact enough or says "maybe" to everything', () => {
    const rows = listWithRepeats();
    const usual = intake(rows);
    // One bit: every number but a group's first is a doubt.
    const allDoubts = intake(rows, new SeenNumbers(1));
    assert.deepEqual(
      journalled(allDoubts.db, allDoubts.fileId),
      journalled(usual.db, usual.fileId),
    );
    assert.deepEqual(allDoubts.counts, usual.counts);

    const { rows: fates, batches, numbersSent } = journalled(usual.db, usual.fileId);
    const valid = fates.filter((r) => r.intake === 'valid');
    assert.equal(valid.length, 350, '300 numbers in a and b, 50 in c');
    assert.ok(
      valid.every((r) => r.inItsBatch === 1),
      'every valid row is in a batch that holds its number',
    );
    assert.equal(numbersSent.length, 350, 'each number once per group across all batches');
    const repeats = fates.filter((r) => r.intake === 'duplicate');
    assert.equal(repeats.length, 43 + 20);
    assert.ok(
      repeats.every(
        (r) => r.duplicateOfLine !== null && r.duplicateOfLine < r.line && r.duplicateOfLine >= 2,
      ),
      'a repeat names the first row with its number',
    );
    assert.equal(usual.counts.duplicates, 63);
    // The fewest requests: a 100, b 200, c 50 numbers at 20 a request, every batch but the last
    // full.
    assert.deepEqual(
      batches.map((b) => b.numbers),
      [...Array<number>(5).fill(20), ...Array<number>(10).fill(20), 20, 20, 10],
    );
  });

  it("places a doubt that was a false alarm, once, in its group's held batch (no extra request)", () => {
    // Distinct numbers only: with one bit, all but the group's first are doubts, and none is a
    // repeat.
    const rows = Array.from({ length: 45 }, (_, k) => row(k + 2, phoneOf(k), 'a'));
    const { db, fileId, counts } = intake(rows, new SeenNumbers(1), 10);
    assert.equal(counts.duplicates, 0);
    assert.deepEqual(
      sqliteOf(db)
        .prepare('SELECT numbers FROM batches WHERE file_id = ? ORDER BY id')
        .pluck()
        .all(fileId),
      [20, 20, 5],
    );
    assert.equal(
      sqliteOf(db)
        .prepare(
          "SELECT count(*) FROM rows WHERE file_id = ? AND intake = 'valid' AND batch_id IS NOT NULL",
        )
        .pluck()
        .get(fileId),
      45,
    );
  });

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

describe('rows settled when the file is read are sent first', () => {
  it('sends the batch that took a false alarm before the batches released while reading, and every number once', async () => {
    /** The filter raises a false alarm on one number, as a real one does now and then. */
    class AlarmedBy extends SeenNumbers {
      constructor(private readonly alarm: string) {
        super(1 << 16);
      }
      override mayHave(groupId: number, phone: string): boolean {
        return phone === this.alarm || super.mayHave(groupId, phone);
      }
      override addIfNew(groupId: number, phone: string): boolean {
        return phone !== this.alarm && super.addIfNew(groupId, phone);
      }
    }
    const numbers = Array.from({ length: 10 }, (_, k) => phoneOf(k));
    const db = freshJournal();
    const file = createFile(db, {
      sha256: 'f',
      name: 'f.csv',
      path: '/f.csv',
      size: 1,
      encoding: 'utf-8',
    });
    const writer = planWriter(db, file.id, {
      maxPerRequest: 3,
      seenNumbers: new AlarmedBy(numbers[1]!),
    });
    writer.write(numbers.map((phone, k) => row(k + 2, phone, 'a')));
    writer.finish();
    // Line 3's number is settled last, into a batch of its own (the others are full): the highest
    // id.
    const batchOfLine3 = sqliteOf(db)
      .prepare('SELECT batch_id FROM rows WHERE line = 3')
      .pluck()
      .get() as number;
    assert.equal(batchOfLine3, sqliteOf(db).prepare('SELECT max(id) FROM batches').pluck().get());

    const sent: string[][] = [];
    const client: ProviderClient = {
      send: (request) => {
        sent.push(request.to);
        return Promise.resolve({
          kind: 'accepted',
          statusCode: '000000',
          smsMessageSid: `sid${sent.length}`,
          dateCreated: '20260101000000',
        });
      },
      close: async () => {},
    };
    const config = loadConfig({
      configDir: mkdtempSync(path.join(os.tmpdir(), 'smsdrop-cfg-')),
      env: {},
    });
    const result = await sendFile(
      {
        send: new SqliteSendStore(db),
        client,
        config,
        limit: pLimit(1),
        rateLimiter: createRateLimiter(),
        pause: new AccountPause(),
      },
      file.id,
    );
    assert.equal(result.state, 'finished');
    assert.deepEqual(sent[0], [numbers[1]], 'the settled row goes first');
    assert.deepEqual(sent.flat().sort(), [...numbers].sort(), 'every number once');
    assert.equal(sent.length, 4, 'ten numbers at three a request');
  });
});
