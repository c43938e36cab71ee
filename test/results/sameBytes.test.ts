// The result files written by src/results/ are, byte for byte, those the journal wrote before they
// moved out of it (the expected text below was written by that code, journal/resultFiles.ts):
// digits Excel would change written as ="digits", cells to quote, a formula guard, a message over
// two lines, a duplicate, and rejected rows with extra columns and cells past the header.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { after, describe, it } from 'node:test';
import { createFile, setFileHeader, setFileStatus } from '../../src/journal/files.js';
import { FILE_STATUS } from '../../src/ports/states.js';
import type { Journal } from '../../src/journal/connection.js';
import { openJournal } from '../../src/journal/open.js';
import { planWriter } from '../journal/planWriter.js';
import type { RowToJournal } from '../../src/plan/rowWriter.js';
import { sqliteReadStore } from '../../src/journal/readStore.js';
import type { Pages, ResultReads } from '../../src/ports/index.js';
import { writeRejectedCsv } from '../../src/results/rejectedCsv.js';
import { writeResultCsv } from '../../src/results/resultCsv.js';
import { ResultSpools, spoolResults } from '../../src/results/spool.js';
import { tempDir } from '../pipeline/helpers.js';
import { sqliteOf } from '../journal/sqliteOf.js';

const dir = tempDir();
const db = openJournal(path.join(dir, 'journal.sqlite'));
after(() => db.close());
/** The journal's reads, as the runtime hands them out. */
const reads = sqliteReadStore(db);

const EXTRAS = { note: 'vip, "gold"', city: '0755' };

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
function journalFile(name: string): number {
  const file = createFile(db, {
    sha256: name.padEnd(64, '0'),
    name: `${name}.csv`,
    path: `/in/${name}.csv`,
    size: 1,
    encoding: 'utf-8',
  });
  setFileStatus(db, file.id, FILE_STATUS.sending);
  const columns = ['phone', 'templateId', 'data1', 'data2', 'note', 'city'];
  setFileHeader(db, file.id, { columns, extras: ['note', 'city'] });
  const writer = planWriter(db, file.id, { maxPerRequest: 2 });
  const bad = (phone: string) => `not a mainland mobile number, "${phone}"`;
  writer.write([
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
  ]);
  writer.finish();
  const settle = sqliteOf(db).prepare(
    'UPDATE batches SET state = ?, status_code = ?, status_msg = ?, sms_message_sid = ?, date_created = ? WHERE id = ?',
  );
  const outcomes = [
    ['accepted', '000000', 'ok'],
    ['failed', '160034', 'black, "listed"'],
    ['unknown', '', 'no answer\r\nafter 2 tries'],
    ['accepted', '000000', 'ok'],
  ];
  const ids = batchIds(db, file.id);
  ids.forEach((id, i) => settle.run(...outcomes[i % 4]!, `sid${i}`, '20261121120000', id));
  return file.id;
}

function batchIds(db: Journal, fileId: number): number[] {
  return sqliteOf(db)
    .prepare('SELECT id FROM batches WHERE file_id = ? ORDER BY id')
    .pluck()
    .all(fileId) as number[];
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

describe('result files written by results/', () => {
  it('NAME.result.csv and NAME.rejected.csv are the bytes the journal wrote before', async () => {
    const fileId = journalFile('bytes');
    const result = await writeResultCsv(reads, fileId, dir, 'bytes');
    assert.equal(readFileSync(result, 'utf8'), EXPECTED_RESULT);
    const rejected = await writeRejectedCsv(reads, fileId, dir, 'bytes');
    assert.equal(readFileSync(rejected!, 'utf8'), EXPECTED_REJECTED);
  });

  it('NAME.result.csv written ahead (spooled) is the same bytes', async () => {
    const fileId = journalFile('spooled');
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
    const fileId = journalFile('later');
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

  it('NAME.rejected.csv holds every invalid row in line order when they span many pages, a turn of the event loop after each', async () => {
    const file = createFile(db, {
      sha256: 'pages'.padEnd(64, '0'),
      name: 'pages.csv',
      path: '/in/pages.csv',
      size: 1,
      encoding: 'utf-8',
    });
    const writer = planWriter(db, file.id, { maxPerRequest: 200 });
    const rows = Array.from({ length: 5000 }, (_, i) =>
      i % 2 === 0
        ? row(i + 2, `1${i}`, undefined, ['p'], { error: `bad ${i}` })
        : row(i + 2, String(13_200_000_000 + i), String(13_200_000_000 + i), ['p']),
    );
    writer.write(rows);
    writer.finish();
    let turns = 0;
    let written = false;
    const tick = () => {
      if (written) return;
      turns++;
      setImmediate(tick);
    };
    setImmediate(tick);
    const rejected = await writeRejectedCsv(reads, file.id, dir, 'pages').finally(
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
