// NAME.result.csv: SQLite writes most lines itself (see resultFiles.ts), so the file is checked
// against a plain row-by-row rendering with csvLine, over every kind of row that takes the other
// path: invalid, duplicate, cells to quote or guard, a status message with a comma, a line break
// or the marker character, rows of another file inside the span, a batch not settled yet.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { after, describe, it } from 'node:test';
import { csvLine } from '../../src/csvio/index.js';
import { createFile } from '../../src/journal/files.js';
import { type Db, openJournal } from '../../src/journal/open.js';
import { createRowWriter, type RowToJournal } from '../../src/journal/rows.js';
import { RESULT_HEADER, resultPageSql, writeResultCsv } from '../../src/pipeline/resultFiles.js';
import { tempDir } from './helpers.js';

const dir = tempDir();
const db = openJournal(path.join(dir, 'journal.sqlite'));
after(() => db.close());

function row(line: number, phoneRaw: string, phone: string | undefined, datas: string[], error?: string): RowToJournal {
  return { line, phoneRaw, ...(phone ? { phone } : {}), appId: 'app', templateId: '1', datas, extras: {}, ...(error ? { error } : {}) };
}

function journalFile(name: string, rows: RowToJournal[], maxPerRequest = 2): number {
  const file = createFile(db, { sha256: name.padEnd(64, '0'), name, path: `/in/${name}`, size: 1, encoding: 'utf-8' });
  const writer = createRowWriter(db, file.id, { maxPerRequest });
  // Two chunks, the second interleaved with another file's rows: the span then holds foreign ids.
  writer.write(rows.slice(0, 4));
  if (name === 'a') journalFile('other', [row(2, '13900000001', '13900000001', ['x'])]);
  writer.write(rows.slice(4));
  writer.finish();
  return file.id;
}

/** The reference: each row's cells as the row_results logic says, through csvLine. */
function rowByRow(db: Db, fileId: number): string {
  const rows = db
    .prepare(
      `SELECT r.line, r.phone_raw, r.phone, r.intake, r.error, d.line AS dup_line, b.state, b.status_code, b.status_msg, b.sms_message_sid, b.date_created
       FROM rows r LEFT JOIN batches b ON b.id = r.batch_id LEFT JOIN rows d ON d.id = r.duplicate_of WHERE r.file_id = ? ORDER BY r.id`,
    )
    .all(fileId) as Record<string, string | number | null>[];
  const status = (s: unknown) => (s === 'accepted' || s === 'failed' || s === 'unknown' ? s : 'pending');
  const lines = rows.map((r) => {
    const head = [String(r.line), String(r.phone_raw), String(r.phone ?? '')];
    if (r.intake === 'invalid') return csvLine([...head, 'invalid', '', String(r.error), '', '']);
    if (r.intake === 'duplicate') return csvLine([...head, 'duplicate', '', `duplicate of line ${r.dup_line}`, '', '']);
    return csvLine([...head, status(r.state), String(r.status_code ?? ''), String(r.status_msg ?? ''), String(r.sms_message_sid ?? ''), String(r.date_created ?? '')]);
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
    ]);
    const batches = db.prepare('SELECT b.id, g.datas FROM batches b JOIN groups g ON g.id = b.group_id WHERE b.file_id = ? ORDER BY b.id').all(fileId) as { id: number; datas: string }[];
    const settle = db.prepare('UPDATE batches SET state = ?, status_code = ?, status_msg = ?, sms_message_sid = ?, date_created = ? WHERE id = ?');
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
    assert.equal(readFileSync(out, 'utf8'), rowByRow(db, fileId));
  });

  it('holds every row when the file spans many pages', async () => {
    const rows = Array.from({ length: 12_345 }, (_, i) => row(i + 2, String(13_000_000_000 + i), String(13_000_000_000 + i), ['many']));
    const fileId = journalFile('many', rows, 200);
    const out = await writeResultCsv(db, fileId, dir, 'many');
    assert.equal(readFileSync(out, 'utf8'), rowByRow(db, fileId));
  });

  it('reads rows in id order: rows scanned by rowid range, the status tails looked up', () => {
    db.exec('CREATE TEMP TABLE plan_tails (batch_id INTEGER PRIMARY KEY, tail TEXT NOT NULL)');
    const plan = db.prepare(`EXPLAIN QUERY PLAN ${resultPageSql('plan_tails')}`).all(1, 2, 3) as { detail: string }[];
    db.exec('DROP TABLE temp.plan_tails');
    assert.deepEqual(
      plan.map((p) => p.detail),
      ['SEARCH r USING INTEGER PRIMARY KEY (rowid>? AND rowid<?)', 'SEARCH t USING INTEGER PRIMARY KEY (rowid=?) LEFT-JOIN'],
    );
  });
});
