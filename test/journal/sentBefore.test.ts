// Rows other files sent: a row with the same message and number is a duplicate of theirs, and
// which earlier rows count is decided by their batch (sentBefore.ts).
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, describe, it } from 'node:test';
import { createFile, setFileStatus } from '../../src/journal/files.js';
import type { Journal } from '../../src/journal/connection.js';
import { openJournal } from '../../src/journal/open.js';
import { plannedRow as row, planWriter } from './planWriter.js';
import type { RowToJournal } from '../../src/plan/rowWriter.js';
import { parseRepeatWindow, type RepeatWindow } from '../../src/config/settings/durations.js';
import { sentBeforeLookup } from '../../src/journal/sentBefore.js';
import { SQLITE_DIALECT } from '../../src/journal/rules.js';
import { earlierRowsOfPairs } from '../../src/journalRules/sentBefore.js';
import { FILE_STATUS, type FileStatus } from '../../src/ports/states.js';
import { sqliteOf } from './sqliteOf.js';

const DAY: RepeatWindow = { ms: 86_400_000, text: '24h' };

function journal(): Journal {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'smsdrop-sent-before-'));
  const db = openJournal(path.join(dir, 'journal.sqlite'));
  after(() => {
    db.close();
    rmSync(dir, { recursive: true, force: true });
  });
  return db;
}

let files = 0;
/**
 * A file's rows written as intake writes them, each batch of `perBatch` numbers; returns the file's
 * id.
 */
function readFile(
  db: Journal,
  rows: RowToJournal[],
  options: { window?: RepeatWindow; perBatch?: number; status?: FileStatus } = {},
): number {
  const file = createFile(db, {
    sha256: `f${++files}`,
    name: `f${files}.csv`,
    path: `/f${files}.csv`,
    size: 1,
    encoding: 'utf-8',
  });
  const sentBefore = sentBeforeLookup(db, file.id, options.window ?? DAY);
  const writer = planWriter(db, file.id, {
    maxPerRequest: options.perBatch ?? 200,
    ...(sentBefore ? { sentBefore } : {}),
  });
  writer.write(rows);
  writer.finish();
  setFileStatus(db, file.id, options.status ?? FILE_STATUS.sending);
  return file.id;
}

/** Gives every batch of the file holding `phone` this state, with an attempt started `hoursAgo`. */
function settle(
  db: Journal,
  fileId: number,
  phone: string,
  state: string,
  hoursAgo: number | undefined,
): void {
  const batch = sqliteOf(db)
    .prepare('SELECT batch_id FROM rows WHERE file_id = ? AND phone = ? AND batch_id IS NOT NULL')
    .pluck()
    .get(fileId, phone) as number;
  sqliteOf(db).prepare('UPDATE batches SET state = ? WHERE id = ?').run(state, batch);
  if (hoursAgo !== undefined) {
    const at = new Date(Date.now() - hoursAgo * 3_600_000).toISOString();
    sqliteOf(db)
      .prepare(
        "INSERT INTO attempts (batch_id, started_at, finished_at, outcome) VALUES (?, ?, ?, 'accepted')",
      )
      .run(batch, Date.parse(at), Date.parse(at));
  }
}

/** Each row of the file: its phone, intake, and the line and file of the row it repeats. */
function rowsOf(db: Journal, fileId: number): string[] {
  return (
    sqliteOf(db)
      .prepare(
        'SELECT r.phone, r.intake, o.line, o.file_id FROM rows r LEFT JOIN rows o ON o.id = r.duplicate_of WHERE r.file_id = ? ORDER BY r.id',
      )
      .raw()
      .all(fileId) as [string, string, number | null, number | null][]
  ).map(([phone, intake, line, file]) =>
    line === null ? `${phone} ${intake}` : `${phone} ${intake} of ${file}:${line}`,
  );
}

describe('repeats of other files (sentBefore)', () => {
  it('a number another file sent the same message is a duplicate of its row; other numbers and other messages are sent', () => {
    const db = journal();
    const first = readFile(db, [
      row(2, '13800000001'),
      row(3, '13800000002'),
      row(4, '13800000003', 'b'),
    ]);
    settle(db, first, '13800000001', 'accepted', 1);
    assert.equal(sentBeforeLookup(db, first, DAY), undefined, "a file's own rows are not repeats");
    const second = readFile(db, [
      row(2, '13800000002'),
      row(3, '13800000001'),
      row(4, '13800000004'),
      row(5, '13800000003', 'c'),
      row(6, '13800000001'),
    ]);
    assert.deepEqual(rowsOf(db, second), [
      `13800000002 duplicate of ${first}:3`, // planned in a file being sent: it will go
      `13800000001 duplicate of ${first}:2`,
      '13800000004 valid',
      '13800000003 valid', // the same number, another message
      `13800000001 duplicate of ${first}:2`, // twice in this file: both repeat the earlier file's row
    ]);
    const counts = sqliteOf(db)
      .prepare('SELECT rows, duplicates, repeats FROM files WHERE id = ?')
      .raw()
      .get(second);
    assert.deepEqual(counts, [5, 3, 3]);
    assert.deepEqual(
      sqliteOf(db)
        .prepare('SELECT numbers FROM batches WHERE file_id = ? ORDER BY id')
        .pluck()
        .all(second),
      [1, 1],
      'only the new rows are planned',
    );
  });

  it('counts what may have reached the provider within the window, and what a file being sent still will send', () => {
    const db = journal();
    const phones = [
      '13900000001',
      '13900000002',
      '13900000003',
      '13900000004',
      '13900000005',
      '13900000006',
    ];
    const first = readFile(
      db,
      phones.map((p, i) => row(i + 2, p)),
      { perBatch: 1 },
    );
    settle(db, first, phones[0]!, 'accepted', 23); // within 24 h
    settle(db, first, phones[1]!, 'accepted', 25); // before the window
    settle(db, first, phones[2]!, 'unknown', 2); // may have arrived
    settle(db, first, phones[3]!, 'failed', 1); // not sent
    settle(db, first, phones[4]!, 'sending', 30); // in flight or cut off: in doubt, whenever it started
    // phones[5]: planned, in a file being sent
    const second = readFile(
      db,
      phones.map((p, i) => row(i + 2, p)),
    );
    assert.deepEqual(
      rowsOf(db, second).map((r) => r.replace(/ of .*/, '')),
      [
        `${phones[0]} duplicate`,
        `${phones[1]} valid`,
        `${phones[2]} duplicate`,
        `${phones[3]} valid`,
        `${phones[4]} duplicate`,
        `${phones[5]} duplicate`,
      ],
    );
  });

  it('does not count the planned rows of a file refused or cut short in its intake (read again, it sends them), nor its own rows', () => {
    const db = journal();
    const refused = readFile(db, [row(2, '13700000001')], { status: FILE_STATUS.refused });
    const cutShort = readFile(db, [row(2, '13700000002')], { status: FILE_STATUS.intake });
    const later = readFile(db, [row(2, '13700000001'), row(3, '13700000002')]);
    assert.deepEqual(rowsOf(db, later), ['13700000001 valid', '13700000002 valid']);
    // The refused file's row went out (a request cut off): it counts, whenever it started.
    settle(db, refused, '13700000001', 'sending', 48);
    const again = readFile(db, [row(2, '13700000001'), row(3, '13700000002')]);
    assert.deepEqual(
      rowsOf(db, again).map((r) => r.replace(/ of .*/, '')),
      ['13700000001 duplicate', '13700000002 duplicate'],
      'the second from the file before, being sent',
    );

    // A planned batch with an attempt behind it (answered "try again", say), or split from one, is
    // kept when its file is read again, and sent then under its own reqId: it counts.
    const kept = readFile(db, [row(2, '13700000003'), row(3, '13700000004', 'b')], {
      status: FILE_STATUS.intake,
      perBatch: 1,
    });
    const [tried, split] = sqliteOf(db)
      .prepare('SELECT id FROM batches WHERE file_id = ? ORDER BY id')
      .pluck()
      .all(kept) as number[];
    sqliteOf(db)
      .prepare(
        "INSERT INTO attempts (batch_id, started_at, outcome) VALUES (?, 1577836800000, 'retryable')",
      )
      .run(tried);
    sqliteOf(db).prepare('UPDATE batches SET parent_id = ? WHERE id = ?').run(tried, split);
    const after = readFile(db, [row(2, '13700000003'), row(3, '13700000004', 'b')]);
    assert.deepEqual(rowsOf(db, after), [
      `13700000003 duplicate of ${kept}:2`,
      `13700000004 duplicate of ${kept}:3`,
    ]);
    assert.ok(cutShort);
  });

  it('international numbers are told apart from mainland ones; off counts nothing', () => {
    const db = journal();
    const first = readFile(db, [row(2, '0013800000001'), row(3, '0044207946000')]);
    settle(db, first, '0044207946000', 'accepted', 1);
    const second = readFile(db, [
      row(2, '13800000001'),
      row(3, '0044207946000'),
      row(4, '00442079460001'),
    ]);
    assert.deepEqual(rowsOf(db, second), [
      '13800000001 valid',
      `0044207946000 duplicate of ${first}:3`,
      '00442079460001 valid',
    ]);
    const third = readFile(db, [row(2, '0044207946000')], { window: { ms: 0, text: 'off' } });
    assert.deepEqual(rowsOf(db, third), ['0044207946000 valid']);
  });

  it("seeks a message's numbers by group, then number: a file's own entries go at the index's end", () => {
    // Keyed by number, the index would take each file's random numbers all over its leaves, and
    // every commit of an intake would write them: a file would cost more the more rows it holds.
    const db = journal();
    const step = earlierRowsOfPairs(
      SQLITE_DIALECT,
      [
        ['13800138000', 1],
        ['13800138000', 2],
      ],
      new Date().toISOString(),
    ).next().value as { text: string; params: (string | number)[] };
    const plan = (
      sqliteOf(db)
        .prepare(`EXPLAIN QUERY PLAN ${step.text}`)
        .all(...step.params) as Array<{
        detail: string;
      }>
    ).map((r) => r.detail);
    assert.ok(
      plan.some((d) =>
        /^SEARCH r USING INDEX rows_by_group_phone \(group_id=\? AND phone=\?\)/.test(d),
      ),
      plan.join('\n'),
    );
    const columns = sqliteOf(db).pragma('index_info(rows_by_group_phone)') as Array<{
      name: string;
    }>;
    assert.deepEqual(
      columns.map((c) => c.name),
      ['group_id', 'phone'],
    );
  });

  it('reads the window as written', () => {
    assert.deepEqual(parseRepeatWindow('24h'), { ms: 86_400_000, text: '24h' });
    assert.deepEqual(parseRepeatWindow(' 7D '), { ms: 7 * 86_400_000, text: '7d' });
    assert.deepEqual(parseRepeatWindow('1.5h'), { ms: 5_400_000, text: '1.5h' });
    assert.deepEqual(parseRepeatWindow('off'), { ms: 0, text: 'off' });
    assert.deepEqual(parseRepeatWindow('0'), { ms: 0, text: 'off' });
    assert.match(parseRepeatWindow('30s') as string, /at least 1 minute/);
    assert.match(parseRepeatWindow('91d') as string, /at most 90 days/);
    assert.match(parseRepeatWindow('tomorrow') as string, /expected a duration such as 24h/);
  });
});
