// The result files written by src/results/ from each journal's reads are, byte for byte, those the
// SQLite journal wrote before they moved out of it (the expected text below was written by that
// code, journal/resultFiles.ts): digits Excel would change written as ="digits", cells to quote, a
// formula guard, a message over two lines, a duplicate, and rejected rows with extra columns and
// cells past the header.
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, it } from 'node:test';
import { FILE_STATUS } from '../../src/ports/states.js';
import { createRowWriter, type RowToJournal } from '../../src/plan/rowWriter.js';
import type { Pages, ReadStore, ResultReads } from '../../src/ports/index.js';
import { writeRejectedCsv } from '../../src/results/rejectedCsv.js';
import { writeResultCsv } from '../../src/results/resultCsv.js';
import { ResultSpools, spoolResults } from '../../src/results/spool.js';
import { onEachJournal, type Subject } from './journals.js';

const dirs: string[] = [];
after(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

/** A fresh journal, and a folder for the result files written from it. */
async function journalAndFolder(
  open: () => Promise<Subject>,
): Promise<{ j: Subject; reads: ReadStore; dir: string }> {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'smsdrop-result-bytes-'));
  dirs.push(dir);
  const j = await open();
  return { j, reads: j.handle.reads, dir };
}

/** A file read in as the pipeline reads it: claimed, its intake begun, its header saved. */
async function intake(
  j: Subject,
  name: string,
  rows: RowToJournal[],
  maxPerRequest: number,
  header?: { columns: string[]; extras: string[] },
): Promise<number> {
  const file = await j.handle.files.create({
    sha256: name.padEnd(64, '0'),
    name: `${name}.csv`,
    path: `/in/${name}.csv`,
    size: 1,
    encoding: 'utf-8',
  });
  assert.equal(await j.handle.files.claim(file.id), undefined);
  await j.handle.files.beginIntake(file.id);
  const store = j.handle.files.planStore(file.id);
  if (header) store.saveHeader(header);
  const writer = createRowWriter(store, { maxPerRequest });
  await writer.write(rows);
  await writer.finish();
  await j.handle.files.status(file.id, FILE_STATUS.sending);
  return file.id;
}

const EXTRAS = ['vip, "gold"', '0755'];

function row(
  line: number,
  phoneRaw: string,
  phone: string | undefined,
  datas: string[],
  invalid?: { error: string; cells?: string[] },
): RowToJournal {
  const fields = { line, phoneRaw, appId: 'app', templateId: '1', datas, extras: EXTRAS };
  return { ...fields, ...(phone ? { phone } : {}), ...invalid };
}

/** The file: its header, its rows, and its batches' outcomes (2 numbers a request). */
async function journalFile(j: Subject, name: string): Promise<number> {
  const columns = ['phone', 'templateId', 'data1', 'data2', 'note', 'city'];
  const bad = (phone: string) => `not a mainland mobile number, "${phone}"`;
  const fileId = await intake(
    j,
    name,
    [
      row(2, '13800000001', '13800000001', ['a', 'x']),
      row(3, '138 0000 0002', '13800000002', ['a', 'x']),
      row(4, '=13800000003', '13800000003', ['a', 'x']),
      row(5, '8613800000010', '13800000010', ['b', 'y']),
      row(6, '013800000011', '13800000011', ['b', 'y']),
      row(7, '00447911123456', '00447911123456', ['c, "q"', 'z']),
      row(8, '12345', undefined, ['a', 'x'], {
        error: bad('12345'),
        cells: ['12345', '1', 'a', 'x', 'vip, "gold"', '0755', 'past, the end', '007'],
      }),
      row(9, '0123456789012', undefined, ['d'], { error: bad('0123456789012') }),
      row(10, '13800000001', '13800000001', ['a', 'x']),
      row(11, '+86 138 0000 0012', '13800000012', ['d', 'w']),
    ],
    2,
    { columns, extras: ['note', 'city'] },
  );
  const outcomes = [
    ['accepted', '000000', 'ok'],
    ['failed', '160034', 'black, "listed"'],
    ['unknown', '', 'no answer\r\nafter 2 tries'],
    ['accepted', '000000', 'ok'],
  ];
  const ids = await batchIds(j, fileId);
  for (const [i, id] of ids.entries())
    await j.run(
      'UPDATE batches SET state = ?, status_code = ?, status_msg = ?, sms_message_sid = ?, date_created = ? WHERE id = ?',
      ...outcomes[i % 4]!,
      `sid${i}`,
      '20261121120000',
      id,
    );
  return fileId;
}

async function batchIds(j: Subject, fileId: number): Promise<number[]> {
  const rows = await j.all<{ id: number }>(
    'SELECT id FROM batches WHERE file_id = ? ORDER BY id',
    fileId,
  );
  return rows.map((r) => r.id);
}

/** Pages handed out one microtask apart, as a store that waits for them would. */
async function* asyncPages<T>(pages: Pages<T>): AsyncGenerator<readonly T[]> {
  for await (const page of pages) yield await Promise.resolve(page);
}

const csv = (...records: string[]) => `\uFEFF${records.join('\r\n')}\r\n`;
const DATE = '"=""20261121120000"""';

const EXPECTED_RESULT = csv(
  'line,phone,normalised_phone,status,status_code,message,sms_message_sid,date_created',
  `2,13800000001,13800000001,accepted,"=""000000""",ok,sid0,${DATE}`,
  `3,138 0000 0002,13800000002,accepted,"=""000000""",ok,sid0,${DATE}`,
  `4,'=13800000003,13800000003,failed,160034,"black, ""listed""",sid1,${DATE}`,
  `5,"=""8613800000010""",13800000010,unknown,,"no answer\r\nafter 2 tries",sid2,${DATE}`,
  `6,"=""013800000011""",13800000011,unknown,,"no answer\r\nafter 2 tries",sid2,${DATE}`,
  `7,"=""00447911123456""","=""00447911123456""",accepted,"=""000000""",ok,sid3,${DATE}`,
  '8,12345,,invalid,,"not a mainland mobile number, ""12345""",,',
  '9,"=""0123456789012""",,invalid,,"not a mainland mobile number, ""0123456789012""",,',
  '10,13800000001,13800000001,duplicate,,duplicate of line 2,,',
  `11,'+86 138 0000 0012,13800000012,accepted,"=""000000""",ok,sid4,${DATE}`,
);

const EXPECTED_REJECTED = csv(
  'line,reason,phone,appId,templateId,data1,data2,note,city,beyond the header 1,beyond the header 2',
  '8,"not a mainland mobile number, ""12345""",12345,app,1,a,x,"vip, ""gold""","=""0755""","past, the end","=""007"""',
  '9,"not a mainland mobile number, ""0123456789012""","=""0123456789012""",app,1,d,,"vip, ""gold""","=""0755""",,',
);

onEachJournal('result files written by results/', ({ open }) => {
  it('NAME.result.csv and NAME.rejected.csv are the bytes the journal wrote before', async () => {
    const { j, reads, dir } = await journalAndFolder(open);
    const fileId = await journalFile(j, 'bytes');
    const result = await writeResultCsv(reads, fileId, dir, 'bytes');
    assert.equal(readFileSync(result, 'utf8'), EXPECTED_RESULT);
    const rejected = await writeRejectedCsv(reads, fileId, dir, 'bytes');
    assert.equal(readFileSync(rejected!, 'utf8'), EXPECTED_REJECTED);
  });

  it('NAME.result.csv written ahead (spooled) is the same bytes', async () => {
    const { j, reads, dir } = await journalAndFolder(open);
    const fileId = await journalFile(j, 'spooled');
    const spools = new ResultSpools(dir);
    const spool = spoolResults(spools, reads, fileId);
    spool.advance();
    await spool.complete();
    assert.equal(spools.pending(fileId), true);
    const result = await writeResultCsv(reads, fileId, dir, 'spooled', spools);
    assert.equal(spools.pending(fileId), false, 'the spooled file was taken');
    assert.equal(readFileSync(result, 'utf8'), EXPECTED_RESULT);
  });

  it('is the same bytes from a store that answers later (promises, pages as an async iterator)', async () => {
    const { j, reads, dir } = await journalAndFolder(open);
    const fileId = await journalFile(j, 'later');
    const later: ResultReads = {
      resultPages: (id, format) => {
        const cursor = reads.resultPages(id, format);
        return {
          finalPages: (deadline) => Promise.resolve(cursor.finalPages(deadline)),
          restPages: () => asyncPages(cursor.restPages()),
          close: () => cursor.close(),
        };
      },
      resultsStamp: (id) => Promise.resolve(reads.resultsStamp(id)),
      rejectedRows: (id) => asyncPages(reads.rejectedRows(id)),
      rejectedHeader: (id) => Promise.resolve(reads.rejectedHeader(id)),
    };
    const spools = new ResultSpools(dir);
    const spool = spoolResults(spools, later, fileId);
    spool.advance();
    spool.advance(); // while the first look is under way: skipped
    await spool.complete();
    assert.equal(spools.pending(fileId), true);
    const result = await writeResultCsv(later, fileId, dir, 'later', spools);
    assert.equal(readFileSync(result, 'utf8'), EXPECTED_RESULT);
    const fromJournal = await writeResultCsv(later, fileId, dir, 'later-again');
    assert.equal(readFileSync(fromJournal, 'utf8'), EXPECTED_RESULT);
    const rejected = await writeRejectedCsv(later, fileId, dir, 'later');
    assert.equal(readFileSync(rejected!, 'utf8'), EXPECTED_REJECTED);
  });

  it("a cancelled batch's rows say cancelled, written at once and written ahead", async () => {
    const { j, reads, dir } = await journalAndFolder(open);
    const rows = [2, 3, 4].map((line) =>
      row(line, `1380000010${line}`, `1380000010${line}`, ['c']),
    );
    const fileId = await intake(j, 'cancelled', rows, 1);
    const [sent, ...cancelled] = await batchIds(j, fileId);
    await j.run(
      "UPDATE batches SET state = 'accepted', status_code = '000000' WHERE id = ?",
      sent!,
    );
    for (const id of cancelled)
      await j.run(
        "UPDATE batches SET state = 'cancelled', status_msg = 'by hand' WHERE id = ?",
        id,
      );
    const statuses = (file: string) =>
      readFileSync(file, 'utf8')
        .split('\r\n')
        .slice(1, -1)
        .map((line) => line.split(',')[3]);
    const expected = ['accepted', 'cancelled', 'cancelled'];
    assert.deepEqual(statuses(await writeResultCsv(reads, fileId, dir, 'at-once')), expected);
    const spools = new ResultSpools(dir);
    const spool = spoolResults(spools, reads, fileId);
    spool.advance();
    await spool.complete();
    assert.deepEqual(statuses(await writeResultCsv(reads, fileId, dir, 'ahead', spools)), expected);
  });

  it('NAME.rejected.csv holds every invalid row in line order when they span many pages, a turn of the event loop after each', async () => {
    const { j, reads, dir } = await journalAndFolder(open);
    const rows = Array.from({ length: 5000 }, (_, i) =>
      i % 2 === 0
        ? row(i + 2, `1${i}`, undefined, ['p'], { error: `bad ${i}` })
        : row(i + 2, String(13_200_000_000 + i), String(13_200_000_000 + i), ['p']),
    );
    const fileId = await intake(j, 'pages', rows, 200);
    let turns = 0;
    let written = false;
    const tick = () => {
      if (written) return;
      turns++;
      setImmediate(tick);
    };
    setImmediate(tick);
    const rejected = await writeRejectedCsv(reads, fileId, dir, 'pages').finally(
      () => (written = true),
    );
    // Each of its 3 pages read twice (the widths, then the rows), the event loop turning between:
    // `send` writes it while the requests' answers come in.
    assert.ok(turns >= 6, `the event loop turned ${turns} times while it was written`);
    const lines = readFileSync(rejected!, 'utf8').split('\r\n').slice(1, -1);
    assert.deepEqual(
      lines.map((line) => Number(line.split(',')[0])),
      rows.filter((r) => r.error).map((r) => r.line),
    );
  });
});
