// `smsdrop export`: per-row results as CSV the intake accepts as it is, formula-guarded for Excel,
// and dropped back it sends exactly the text it was made from.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { after, describe, it } from 'node:test';
import { readRows, type IntakeRow } from '../../src/intake/index.js';
import { UsageError } from '../../src/errors.js';
import { parseRowStatuses, requireJournal, resolveFile } from '../../src/report/common.js';
import { exportFile } from '../../src/report/export.js';
import { APP, cleanUp, runCli, sendCsv, simulator, tempDir, writeCsvFile } from './helpers.js';
import { defaultExportName } from '../../src/cli/commands/export.js';
import type { FileRecord } from '../../src/ports/index.js';

after(cleanUp);

/** Values a spreadsheet would run as formulas, Chinese, emoji, CSV metacharacters, edge spaces. */
const TRICKY: Array<[phone: string, d1: string, d2: string]> = [
  ['13800000001', '=SUM(A1:A2)', '+1 pt'],
  ['+86 138 0000 0002', '-5 元', '@home'],
  ['13800000003', '您好，张三', '🎉 emoji 👍🏽'],
  ['13800000004', 'comma, "quotes"', 'two\nlines'],
  ['13800000005', ' leading space', "'=already quoted"],
];

const csvCell = (s: string) => (/[",\n]|^\s|\s$/.test(s) ? `"${s.replace(/"/g, '""')}"` : s);
const csvOf = (rows: Array<[string, string, string]>) => [
  'phone,templateId,data1,data2,备注',
  ...rows.map(([p, a, b], i) => [p, '1', a, b, `note ${i}`].map(csvCell).join(',')),
];

/** A row read by intake, its extra cells by their column's name. */
type NamedRow = Omit<IntakeRow, 'extras'> & { extras: Record<string, string> };

async function intake(file: string): Promise<NamedRow[]> {
  const rows: NamedRow[] = [];
  let names: string[] = [];
  for await (const chunk of readRows(file, {
    encoding: 'utf-8',
    allowInternational: false,
    defaultAppId: APP,
    onHeader: (_map, extraNames) => (names = extraNames),
  }))
    for (const r of chunk)
      rows.push({ ...r, extras: Object.fromEntries(names.map((n, i) => [n, r.extras[i] ?? ''])) });
  return rows;
}

const sent = (r: NamedRow) => ({
  phoneRaw: r.phoneRaw,
  phone: r.phone,
  appId: r.appId,
  templateId: r.templateId,
  datas: r.datas,
  note: r.extras['备注'],
});

describe('export', () => {
  it('round trip: the export read by the intake gives the rows of the original, and dropped back sends the same text', async () => {
    const dir = tempDir();
    const dataDir = path.join(dir, 'data');
    const original = writeCsvFile(dir, 'tricky.csv', csvOf(TRICKY));
    const first = await simulator();
    assert.equal((await sendCsv(dataDir, first, original)).outcome, 'finished');

    const exported = path.join(dir, 'tricky.export.csv');
    const db = await requireJournal({ dataDir });
    try {
      assert.equal(
        await exportFile(db, await resolveFile(db, 'tricky.csv'), { out: exported }),
        TRICKY.length,
      );
    } finally {
      db.close();
    }
    const bytes = fs.readFileSync(exported);
    assert.deepEqual([...bytes.subarray(0, 3)], [0xef, 0xbb, 0xbf], 'UTF-8 BOM for Excel');
    const text = bytes.toString('utf8');
    assert.ok(
      text.includes("'=SUM(A1:A2)") &&
        text.includes("'@home") &&
        text.includes("'+86 138 0000 0002") &&
        text.includes("'-5 元"),
      'formula cells are guarded',
    );
    assert.ok(!/(^|,)[=+\-@]/m.test(text), 'no cell starts with a formula character');

    const back = await intake(exported);
    assert.deepEqual(back.map(sent), (await intake(original)).map(sent));
    assert.deepEqual(Object.keys(back[0]!.extras), [
      '备注',
      'line',
      'status',
      'status_code',
      'message',
    ]);
    assert.deepEqual(
      back.map((r) => r.extras.status),
      TRICKY.map(() => 'accepted'),
    );

    // Dropped back as it is, its rows repeat messages the original sent (the repeat window):
    // nothing goes. Sent again on purpose (--resend), every row goes with the same text.
    const second = await simulator();
    const repeated = await sendCsv(dataDir, second, exported);
    assert.deepEqual(
      [repeated.outcome, repeated.counts.repeats, second.records.length],
      ['finished', TRICKY.length, 0],
    );
    assert.equal(
      (await sendCsv(dataDir, second, exported, {}, { resend: true })).outcome,
      'finished',
    );
    const textOf = (records: typeof first.records) =>
      records.flatMap((r) => r.to.map((to) => `${to} ${JSON.stringify(r.datas)}`)).sort();
    assert.deepEqual(
      textOf(second.records),
      textOf(first.records),
      'the same numbers got the same text',
    );
  });

  it('only the statuses asked for; result columns of an earlier export are not repeated', async () => {
    const dir = tempDir();
    const dataDir = path.join(dir, 'data');
    const sim = await simulator({ blocked: ['13800000002'] });
    const lines = [
      'phone,templateId,data1,data2,status',
      '13800000001,1,a,b,vip',
      '13800000002,1,a,b,vip',
      '123,1,a,b,x',
    ];
    await sendCsv(dataDir, sim, writeCsvFile(dir, 'mixed.csv', lines), { maxPerRequest: 1 });
    const out = path.join(dir, 'failed.csv');
    const db = await requireJournal({ dataDir });
    try {
      assert.equal(
        await exportFile(db, await resolveFile(db, 'mixed.csv'), {
          statuses: parseRowStatuses('failed,invalid'),
          out,
        }),
        2,
      );
    } finally {
      db.close();
    }
    const rows = await intake(out);
    assert.deepEqual(
      rows.map((r) => [r.phoneRaw, r.extras.status, r.extras.status_code, r.extras.line]),
      [
        ['13800000002', 'failed', '160034', '3'],
        ['123', 'invalid', '', '4'],
      ],
    );
    const header = fs.readFileSync(out, 'utf8').split('\r\n')[0]!;
    assert.equal(
      header,
      '\uFEFFphone,appId,templateId,data1,data2,line,status,status_code,message',
      'the old "status" column gives way to the result',
    );
  });

  it("names its default output after the list's stem, whatever its extension", () => {
    const named = (name: string) => defaultExportName({ name } as FileRecord);
    assert.deepEqual(['a.csv', 'b.TSV', 'c.txt', 'd.xlsx'].map(named), [
      'a.export.csv',
      'b.export.csv',
      'c.export.csv',
      'd.xlsx.export.csv',
    ]);
  });

  it('an unknown status name is a usage error', () => {
    assert.throws(
      () => parseRowStatuses('failed,sent'),
      (err: Error) => err instanceof UsageError && /unknown status "sent"/.test(err.message),
    );
    assert.deepEqual(parseRowStatuses(' Failed , duplicates '), ['failed', 'duplicate']);
  });

  it('CLI: default NAME.export.csv in the current folder; --out - writes to standard output; bad arguments exit 2', async () => {
    const dir = tempDir();
    const dataDir = path.join(dir, 'data');
    const sim = await simulator();
    await sendCsv(
      dataDir,
      sim,
      writeCsvFile(dir, 'cli.csv', ['phone,templateId,data1,data2', '13800000001,1,=a,b']),
    );
    // Independent runs, in parallel: each CLI start costs a second or two.
    const [toFile, toStdout, badStatus, badFile] = await Promise.all([
      runCli(['export', 'cli.csv'], { dataDir }),
      runCli(['export', '1', '--status', 'accepted', '--out', '-'], { dataDir }),
      runCli(['export', '1', '--status', 'sent'], { dataDir }),
      runCli(['export', 'nope.csv'], { dataDir }),
    ]);
    assert.equal(toFile.code, 0, toFile.stderr);
    assert.match(
      fs.readFileSync(path.join(dir, 'cli.export.csv'), 'utf8'),
      /^\uFEFFphone,appId,templateId,data1,data2,line,status,status_code,message\r\n13800000001,[^,]+,1,'=a,b,2,accepted,"=""000000""",\r\n$/,
    );
    assert.equal(toStdout.code, 0, toStdout.stderr);
    assert.equal(toStdout.stdout, fs.readFileSync(path.join(dir, 'cli.export.csv'), 'utf8'));
    assert.equal(badStatus.code, 2);
    assert.match(badStatus.stderr, /unknown status "sent"/);
    assert.equal(badFile.code, 2);
    assert.match(badFile.stderr, /no file "nope\.csv"/);
  });
});
