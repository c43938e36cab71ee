// One valid row per (group, number) without an index of rows by number, on each journal: intake
// asks a Bloom filter (plan/seenNumbers.ts), and the rows it cannot vouch for ("doubts") are
// settled from the journal (the PlanStore's placed rows) when the file is read. Whatever the filter
// says, the journal must come out the same. (That a group's last batch is held while a doubt of it
// is unsettled is read inside SQLite's intake transaction: test/journal/doubtsHeld.test.ts.)
import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { it } from 'node:test';
import pLimit from 'p-limit';
import { loadConfig } from '../../src/config/index.js';
import type { IntakeCounts } from '../../src/plan/store.js';
import { createRowWriter, type RowToJournal } from '../../src/plan/rowWriter.js';
import { SeenNumbers } from '../../src/plan/seenNumbers.js';
import type { ProviderClient } from '../../src/provider/client.js';
import { sendFile } from '../../src/send/index.js';
import { AccountPause, createRateLimiter } from '../../src/send/rate.js';
import { onEachJournal, type Subject } from './journals.js';

const phoneOf = (k: number) => `13${String((k * 7_919_993) % 1_000_000_000).padStart(9, '0')}`;

/** A valid row as intake makes it: app `app`, template '1', one value. */
const row = (line: number, phone: string, value: string): RowToJournal => ({
  line,
  phoneRaw: phone,
  phone,
  appId: 'app',
  templateId: '1',
  datas: [value],
  extras: [],
});

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
async function journalled(j: Subject, fileId: number) {
  const found = await j.all<{
    line: number;
    intake: string;
    duplicate_of_line: number | null;
    datas: string;
    phone: string | null;
    phones: string | null;
  }>(
    `SELECT r.line, r.intake, d.line AS duplicate_of_line, g.datas, r.phone, ${j.rules.dialect.batchPhones('b')} AS phones
     FROM rows r JOIN groups g ON g.id = r.group_id LEFT JOIN rows d ON d.id = r.duplicate_of LEFT JOIN batches b ON b.id = r.batch_id
     WHERE r.file_id = ? ORDER BY r.line`,
    fileId,
  );
  const rows: JournalledRow[] = found.map((r) => ({
    line: r.line,
    intake: r.intake,
    duplicateOfLine: r.duplicate_of_line,
    datas: r.datas,
    inItsBatch: r.phones !== null && `,${r.phones},`.includes(`,${r.phone},`) ? 1 : 0,
  }));
  const batches: JournalledBatch[] = (
    await j.all<{ datas: string; numbers: number; next_attempt_at: number }>(
      'SELECT g.datas, b.numbers, b.next_attempt_at FROM batches b JOIN groups g ON g.id = b.group_id WHERE b.file_id = ?',
      fileId,
    )
  )
    .map((b) => ({ datas: b.datas, numbers: b.numbers, due: b.next_attempt_at === 0 ? 1 : 0 }))
    .sort((x, y) => (x.datas < y.datas ? -1 : x.datas > y.datas ? 1 : y.numbers - x.numbers));
  const numbersSent = await j.all<{ phones: string }>(
    `SELECT ${j.rules.dialect.batchPhones('b')} AS phones FROM batches b WHERE b.file_id = ? AND ${j.rules.dialect.batchPhones('b')} IS NOT NULL`,
    fileId,
  );
  return {
    rows,
    batches,
    numbersSent: numbersSent.flatMap((n) => n.phones.split(',')).sort(),
  };
}

/** The rows read into a fresh file of `j` in chunks, as the pipeline reads them. */
async function intake(
  j: Subject,
  rows: RowToJournal[],
  options: { seenNumbers?: SeenNumbers; chunk?: number; maxPerRequest?: number } = {},
): Promise<{ fileId: number; counts: IntakeCounts }> {
  const { id: fileId } = await j.handle.files.create({
    sha256: `s${rows.length}`,
    name: 's.csv',
    path: '/s.csv',
    size: 1,
    encoding: 'utf-8',
  });
  assert.equal(await j.handle.files.claim(fileId), undefined);
  await j.handle.files.beginIntake(fileId);
  const writer = createRowWriter(j.handle.files.planStore(fileId), {
    maxPerRequest: options.maxPerRequest ?? 20,
    ...(options.seenNumbers ? { seenNumbers: options.seenNumbers } : {}),
  });
  const chunk = options.chunk ?? 37;
  for (let i = 0; i < rows.length; i += chunk) await writer.write(rows.slice(i, i + chunk));
  return { fileId, counts: await writer.finish() };
}

onEachJournal('one valid row per (group, number) without an index by number', ({ open }) => {
  it('journals the same rows, duplicates and batches whether the filter is exact enough or says "maybe" to everything', async () => {
    const rows = listWithRepeats();
    const usualJournal = await open();
    const usual = await intake(usualJournal, rows);
    // One bit: every number but a group's first is a doubt.
    const allDoubtsJournal = await open();
    const allDoubts = await intake(allDoubtsJournal, rows, { seenNumbers: new SeenNumbers(1) });
    assert.deepEqual(
      await journalled(allDoubtsJournal, allDoubts.fileId),
      await journalled(usualJournal, usual.fileId),
    );
    assert.deepEqual(allDoubts.counts, usual.counts);

    const { rows: fates, batches, numbersSent } = await journalled(usualJournal, usual.fileId);
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

  it("places a doubt that was a false alarm, once, in its group's held batch (no extra request)", async () => {
    // Distinct numbers only: with one bit, all but the group's first are doubts, and none is a
    // repeat.
    const j = await open();
    const rows = Array.from({ length: 45 }, (_, k) => row(k + 2, phoneOf(k), 'a'));
    const { fileId, counts } = await intake(j, rows, {
      seenNumbers: new SeenNumbers(1),
      chunk: 10,
    });
    assert.equal(counts.duplicates, 0);
    assert.deepEqual(
      (
        await j.all<{ numbers: number }>(
          'SELECT numbers FROM batches WHERE file_id = ? ORDER BY id',
          fileId,
        )
      ).map((b) => b.numbers),
      [20, 20, 5],
    );
    const placed = await j.get<{ n: number }>(
      "SELECT count(*) AS n FROM rows WHERE file_id = ? AND intake = 'valid' AND batch_id IS NOT NULL",
      fileId,
    );
    assert.equal(placed!.n, 45);
  });
});

onEachJournal('rows settled when the file is read are sent first', ({ open }) => {
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
    const j = await open();
    const numbers = Array.from({ length: 10 }, (_, k) => phoneOf(k));
    const { fileId } = await intake(
      j,
      numbers.map((phone, k) => row(k + 2, phone, 'a')),
      { seenNumbers: new AlarmedBy(numbers[1]!), chunk: numbers.length, maxPerRequest: 3 },
    );
    await j.handle.files.status(fileId, 'sending');
    // Line 3's number is settled last, into a batch of its own (the others are full): the highest
    // id.
    const batchOfLine3 = await j.get<{ batch_id: number }>(
      'SELECT batch_id FROM rows WHERE file_id = ? AND line = 3',
      fileId,
    );
    const last = await j.get<{ id: number }>('SELECT max(id) AS id FROM batches');
    assert.equal(batchOfLine3!.batch_id, last!.id);

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
        send: j.handle.send,
        client,
        config,
        limit: pLimit(1),
        rateLimiter: createRateLimiter(),
        pause: new AccountPause(),
      },
      fileId,
    );
    assert.equal(result.state, 'finished');
    assert.deepEqual(sent[0], [numbers[1]], 'the settled row goes first');
    assert.deepEqual(sent.flat().sort(), [...numbers].sort(), 'every number once');
    assert.equal(sent.length, 4, 'ten numbers at three a request');
  });
});
