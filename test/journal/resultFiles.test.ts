// NAME.result.csv: SQLite writes most lines itself (see journal/resultRows.ts), so the file is
// checked against a plain row-by-row rendering with csvLine, over every kind of row that takes
// the other path: invalid, duplicate, cells to quote or guard, a status message with a comma, a
// line break or the marker character, rows of another file inside the span, a batch not settled
// yet.
import assert from 'node:assert/strict';
import { SQLITE_DIALECT } from '../../src/journal/rules.js';
import { phoneRawOf } from '../../src/journal/storedForms.js';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, describe, it } from 'node:test';
import { csvLine } from '../../src/csvio/index.js';
import { applyTransition, startAttempt } from '../../src/journal/sendMoves.js';
import { batchPhones, getBatch } from '../../src/journal/batchNumbers.js';
import { createFile, setFileStatus } from '../../src/journal/files.js';
import { SENT_BY_A_FILE_READ_AGAIN, SENT_BY_ANOTHER_FILE } from '../../src/ports/results.js';
import { sentBeforeLookup } from '../../src/journal/sentBefore.js';
import { FILE_STATUS } from '../../src/ports/states.js';
import type { Journal } from '../../src/journal/connection.js';
import { openJournal } from '../../src/journal/open.js';
import { planWriter } from './planWriter.js';
import type { RowToJournal } from '../../src/plan/rowWriter.js';
import { resultPageSql } from '../../src/journal/resultRows.js';
import { sqliteReadStore } from '../../src/journal/readStore.js';
import { RESULT_HEADER, writeResultCsv as writeWith } from '../../src/results/resultCsv.js';
import { ResultSpools, spoolResults as spoolWith } from '../../src/results/spool.js';
import { sqliteOf } from './sqliteOf.js';

const dir = mkdtempSync(path.join(os.tmpdir(), 'smsdrop-result-files-'));
const db = openJournal(path.join(dir, 'journal.sqlite'));
after(() => {
  db.close();
  rmSync(dir, { recursive: true, force: true });
});
/** The spools of this process, as a runtime holds them. */
const spools = new ResultSpools(dir);
/** The journal's reads, as the runtime hands them out. */
const reads = sqliteReadStore(db);
const writeResultCsv = (_: Journal, fileId: number, outDir: string, baseName: string) =>
  writeWith(reads, fileId, outDir, baseName, spools);
const spoolResults = (_: Journal, fileId: number) => spoolWith(spools, reads, fileId);

function row(
  line: number,
  phoneRaw: string,
  phone: string | undefined,
  datas: string[],
  error?: string,
): RowToJournal {
  return {
    line,
    phoneRaw,
    ...(phone ? { phone } : {}),
    appId: 'app',
    templateId: '1',
    datas,
    extras: [],
    ...(error ? { error } : {}),
  };
}

function journalFile(name: string, rows: RowToJournal[], maxPerRequest = 2): number {
  const file = createFile(db, {
    sha256: name.padEnd(64, '0'),
    name,
    path: `/in/${name}`,
    size: 1,
    encoding: 'utf-8',
  });
  // Its planned rows count for the files after it (repeats).
  setFileStatus(db, file.id, FILE_STATUS.sending);
  const sentBefore = sentBeforeLookup(db, file.id, { ms: 86_400_000, text: '24h' });
  const writer = planWriter(db, file.id, {
    maxPerRequest,
    ...(sentBefore ? { sentBefore } : {}),
  });
  // Two chunks, the second interleaved with another file's rows: the span then holds foreign ids.
  writer.write(rows.slice(0, 4));
  if (name === 'a') journalFile('other', [row(2, '13900000001', '13900000001', ['x'])]);
  writer.write(rows.slice(4));
  writer.finish();
  return file.id;
}

/** Digits Excel would change (000000, a date, 0044…) are written as ="digits", as export does. */
const DIGITS_AS_TEXT = true;

/** The reference: each row's cells as the row_results logic says, through csvLine. */
function rowByRow(db: Journal, fileId: number): string {
  const rows = sqliteOf(db)
    .prepare(
      `SELECT r.line, ${phoneRawOf('r')} AS phone_raw, r.phone, r.intake, r.error, d.line AS dup_line, d.file_id AS dup_file, df.name AS dup_name,
              b.state, b.status_code, b.status_msg, ${SQLITE_DIALECT.sidText('b.sms_message_sid')} AS sms_message_sid,
              ${SQLITE_DIALECT.stampText('b.date_created')} AS date_created
       FROM rows r LEFT JOIN batches b ON b.id = r.batch_id LEFT JOIN rows d ON d.id = r.duplicate_of LEFT JOIN files df ON df.id = d.file_id
       WHERE r.file_id = ? ORDER BY r.id`,
    )
    .all(fileId) as Record<string, string | number | null>[];
  const status = (s: unknown) =>
    s === 'accepted' || s === 'failed' || s === 'unknown' ? s : 'pending';
  const lines = rows.map((r) => {
    const head = [String(r.line), String(r.phone_raw), String(r.phone ?? '')];
    if (r.intake === 'invalid')
      return csvLine([...head, 'invalid', '', String(r.error), '', ''], DIGITS_AS_TEXT);
    if (r.intake === 'duplicate') {
      const of =
        r.dup_file === null
          ? SENT_BY_A_FILE_READ_AGAIN
          : r.dup_file === fileId
            ? `duplicate of line ${r.dup_line}`
            : `${SENT_BY_ANOTHER_FILE}: line ${r.dup_line} of ${r.dup_name} (file ${r.dup_file})`;
      return csvLine([...head, 'duplicate', '', of, '', ''], DIGITS_AS_TEXT);
    }
    return csvLine(
      [
        ...head,
        status(r.state),
        String(r.status_code ?? ''),
        String(r.status_msg ?? ''),
        String(r.sms_message_sid ?? ''),
        String(r.date_created ?? ''),
      ],
      DIGITS_AS_TEXT,
    );
  });
  return `\uFEFF${csvLine(RESULT_HEADER)}${lines.join('')}`;
}

describe('NAME.result.csv', () => {
  it('is exactly the row-by-row rendering, for every kind of row', async () => {
    const fileId = journalFile('a', [
      row(2, '13800000001', '13800000001', ['a']),
      row(3, '138 0000 0002', '13800000002', ['a']), // to quote? no, but not plain digits: csvLine path
      row(4, '=13800000003', '13800000003', ['a']), // guarded
      row(5, '12345', undefined, ['a'], 'not a mainland mobile number, "12345"'),
      row(6, '13800000001', '13800000001', ['a']), // duplicate of line 2
      row(7, '13800000004', '13800000004', ['b']),
      row(8, '13800000005', '13800000005', ['c']),
      row(9, '13800000006', '13800000006', ['d']), // its tail holds the marker character
      row(10, '13800000007', '13800000007', ['e']),
      row(11, '13800000008', '13800000008', ['e']),
      row(12, '+8613800000009', '13800000009', ['e']), // guarded; a second batch of e
      row(13, '8613800000010', '13800000010', ['a']), // digits, 12 or more: Excel would change it
      row(14, '00447911123456', '00447911123456', ['a']), // a leading 0: Excel would drop it
      row(15, '013800000011', '13800000011', ['a']), // the same, as written only
    ]);
    const batches = sqliteOf(db)
      .prepare(
        'SELECT b.id, g.datas FROM batches b JOIN groups g ON g.id = b.group_id WHERE b.file_id = ? ORDER BY b.id',
      )
      .all(fileId) as { id: number; datas: string }[];
    const settle = sqliteOf(db).prepare(
      'UPDATE batches SET state = ?, status_code = ?, status_msg = ?, sms_message_sid = ?, date_created = ? WHERE id = ?',
    );
    const outcomes: Record<string, [string, string, string]> = {
      '["a"]': ['accepted', '000000', 'ok'],
      '["b"]': ['failed', '160034', 'black, listed'],
      '["c"]': ['unknown', '', 'no answer\r\nafter 2 tries'],
      '["d"]': ['failed', '160000', 'odd \x01 byte'],
    }; // ["e"] stays planned: pending
    for (const b of batches) {
      const o = outcomes[b.datas];
      if (o) settle.run(o[0], o[1], o[2], `sid${b.id}`, '20261121120000', b.id);
    }
    const out = await writeResultCsv(db, fileId, dir, 'a');
    const text = readFileSync(out, 'utf8');
    assert.equal(text, rowByRow(db, fileId));
    // Excel shows these as written (="digits", in CSV quotes): the code, the date, and numbers
    // with a leading 0 or of 12 digits or more.
    assert.match(
      text,
      /\r\n2,13800000001,13800000001,accepted,"=""000000""",ok,sid\d+,"=""20261121120000"""\r\n/,
    );
    assert.match(text, /\r\n13,"=""8613800000010""",13800000010,accepted,/);
    assert.match(text, /\r\n14,"=""00447911123456""","=""00447911123456""",accepted,/);
    assert.match(text, /\r\n15,"=""013800000011""",13800000011,accepted,/);
  });

  it('is exactly the row-by-row rendering for rows repeating other files, one of them with a name to quote', async () => {
    journalFile('first.csv', [row(2, '13700000001', '13700000001', ['r'])]);
    journalFile('second, "final".csv', [row(2, '13700000002', '13700000002', ['r'])]);
    const readAgain = journalFile('read again.csv', [row(2, '13700000004', '13700000004', ['r'])]);
    const fileId = journalFile('again', [
      row(2, '13700000001', '13700000001', ['r']), // repeats first.csv: written by SQLite
      row(3, '13700000002', '13700000002', ['r']), // repeats the file whose name needs quotes: csvLine
      row(4, '+86 13700000001', '13700000001', ['r']), // guarded: csvLine
      row(5, '13700000003', '13700000003', ['r']),
      row(6, '13700000004', '13700000004', ['r']), // its earlier row is gone below: csvLine
    ]);
    // That file was cut short, then read again: its intake rewrote the rows no request had carried.
    sqliteOf(db).prepare('DELETE FROM rows WHERE file_id = ?').run(readAgain);
    const out = await writeResultCsv(db, fileId, dir, 'again');
    assert.equal(readFileSync(out, 'utf8'), rowByRow(db, fileId));
    assert.equal(
      sqliteOf(db)
        .prepare('SELECT status_msg FROM row_results WHERE file_id = ? AND line = 6')
        .pluck()
        .get(fileId),
      SENT_BY_A_FILE_READ_AGAIN,
    );
    assert.match(
      readFileSync(out, 'utf8'),
      /^3,13700000002,13700000002,duplicate,,"[^"]+ line 2 of second, ""final"".csv \(file \d+\)",,\r$/m,
    );
  });

  it('holds every row when the file spans many pages', async () => {
    const rows = Array.from({ length: 12_345 }, (_, i) =>
      row(i + 2, String(13_000_000_000 + i), String(13_000_000_000 + i), ['many']),
    );
    const fileId = journalFile('many', rows, 200);
    const out = await writeResultCsv(db, fileId, dir, 'many');
    assert.equal(readFileSync(out, 'utf8'), rowByRow(db, fileId));
  });

  describe('written ahead while sending (spoolResults)', () => {
    const manyRows = (n: number) =>
      Array.from({ length: n }, (_, i) =>
        row(i + 2, String(13_100_000_000 + i), String(13_100_000_000 + i), ['ahead']),
      );
    const batchIds = (fileId: number) =>
      sqliteOf(db)
        .prepare('SELECT id FROM batches WHERE file_id = ? ORDER BY id')
        .pluck()
        .all(fileId) as number[];
    const settle = (ids: number[], msg: string) => {
      const update = sqliteOf(db).prepare(
        "UPDATE batches SET state = 'accepted', status_code = '000000', status_msg = ?, updated_at = ? WHERE id = ?",
      );
      for (const id of ids) update.run(msg, Date.now(), id);
    };
    const spoolFile = (fileId: number) => path.join(dir, 'spool', `result-${fileId}.csv.part`);

    it('writes a page only once all its rows are final, and ends as the file written at the end would', async () => {
      // 2,500 rows of one group, 200 a request: pages of 1,000 rows hold batches 1-5, 6-10, 11-13.
      const fileId = journalFile('ahead', manyRows(2500), 200);
      const ids = batchIds(fileId);
      assert.equal(ids.length, 13);
      settle(ids.slice(0, 9), 'early'); // the 10th (rows 1,801-2,000) is still out: page 2 must wait
      const spool = spoolResults(db, fileId);
      spool.advance();
      // A probe, not a real transition: what the outcomes say now shows which pages went out
      // before.
      sqliteOf(db).prepare("UPDATE batches SET status_msg = 'late' WHERE file_id = ?").run(fileId);
      settle(ids.slice(9), 'late');
      await spool.complete();
      const out = await writeResultCsv(db, fileId, dir, 'ahead');
      assert.equal(existsSync(spoolFile(fileId)), false, 'the spooled file was moved into place');
      const [bomAndHeader, ...lines] = readFileSync(out, 'utf8').split('\r\n');
      const expected = rowByRow(db, fileId).split('\r\n');
      assert.equal(bomAndHeader, expected[0]);
      assert.equal(lines.length, expected.length - 1);
      lines.forEach((line, i) => {
        const want = i < 1000 ? expected[i + 1]!.replace(',late,', ',early,') : expected[i + 1];
        assert.equal(line, want, `line ${i + 1} of the result`);
      });
    });

    it('goes on past a page whose waiting batch was split (its rows moved to new batches)', async () => {
      const fileId = journalFile('split', manyRows(2000), 200);
      const ids = batchIds(fileId);
      settle(ids.slice(0, 9), 'early');
      const spool = spoolResults(db, fileId);
      spool.advance(); // page 1 goes; page 2 waits for the 10th batch
      // The 10th is answered "a number rejected": split in two halves, which are then accepted.
      // (A batch is answered only once its request went out.)
      startAttempt(db, getBatch(db, ids[9]!), null);
      applyTransition(db, ids[9]!, {
        to: 'split',
        statusCode: '160042',
        statusMsg: 'one number rejected',
      });
      assert.equal(getBatch(db, ids[9]!).state, 'split');
      const halves = batchIds(fileId).slice(10);
      assert.equal(halves.length, 2);
      assert.equal(batchPhones(db, halves[0]!).length + batchPhones(db, halves[1]!).length, 200);
      settle(halves, 'early');
      spool.advance(); // page 2 goes now
      sqliteOf(db).prepare("UPDATE batches SET status_msg = 'late' WHERE file_id = ?").run(fileId); // the probe, as above
      await spool.complete();
      const lines = readFileSync(await writeResultCsv(db, fileId, dir, 'split'), 'utf8')
        .split('\r\n')
        .slice(1, -1);
      assert.equal(lines.length, 2000);
      assert.equal(
        lines.filter((line) => line.includes(',early,')).length,
        2000,
        'both pages were written ahead',
      );
    });

    it('is written afresh when the outcomes changed after the spool was completed', async () => {
      const fileId = journalFile('changed', manyRows(1200), 200);
      settle(batchIds(fileId), 'first');
      const spool = spoolResults(db, fileId);
      spool.advance();
      await spool.complete();
      // An outcome recorded in between (a later millisecond: a real one would be).
      sqliteOf(db)
        .prepare(
          "UPDATE batches SET status_msg = 'second', updated_at = 32503680000000 WHERE id = ?",
        )
        .run(batchIds(fileId)[0]);
      const out = await writeResultCsv(db, fileId, dir, 'changed');
      assert.equal(readFileSync(out, 'utf8'), rowByRow(db, fileId));
      assert.match(readFileSync(out, 'utf8'), /,second,/);
      assert.equal(existsSync(spoolFile(fileId)), false);
    });

    it('removes spool files an earlier process left (a crash mid-send)', async () => {
      const leftover = path.join(dir, 'spool', 'result-99999.csv.part');
      mkdirSync(path.dirname(leftover), { recursive: true });
      writeFileSync(leftover, 'half a result file');
      const fileId = journalFile('leftover', manyRows(10), 200);
      const spool = spoolResults(db, fileId);
      assert.equal(existsSync(leftover), false);
      assert.equal(existsSync(spoolFile(fileId)), true);
      await spool.discard();
    });

    it('leaves nothing behind when sending did not finish', async () => {
      const fileId = journalFile('stopped', manyRows(1500), 200);
      settle(batchIds(fileId).slice(0, 5), 'done');
      const spool = spoolResults(db, fileId);
      spool.advance();
      await spool.discard();
      assert.equal(existsSync(spoolFile(fileId)), false);
      const out = await writeResultCsv(db, fileId, dir, 'stopped'); // written from the journal, pending rows and all
      assert.equal(readFileSync(out, 'utf8'), rowByRow(db, fileId));
    });
  });

  it("reads rows in id order: rows scanned by rowid range, the status tails and a duplicate's earlier row looked up", () => {
    sqliteOf(db).exec(
      'CREATE TEMP TABLE plan_tails (batch_id INTEGER PRIMARY KEY, tail TEXT NOT NULL)',
    );
    const plan = sqliteOf(db)
      .prepare(`EXPLAIN QUERY PLAN ${resultPageSql('plan_tails')}`)
      .all(1, 2, 3) as {
      detail: string;
    }[];
    sqliteOf(db).exec('DROP TABLE temp.plan_tails');
    assert.deepEqual(
      plan.map((p) => p.detail),
      [
        'SEARCH r USING INTEGER PRIMARY KEY (rowid>? AND rowid<?)',
        'SEARCH t USING INTEGER PRIMARY KEY (rowid=?) LEFT-JOIN',
        'CORRELATED SCALAR SUBQUERY 1',
        'SEARCH o USING INTEGER PRIMARY KEY (rowid=?)',
        'SEARCH f USING INTEGER PRIMARY KEY (rowid=?)',
      ],
    );
  });
});
