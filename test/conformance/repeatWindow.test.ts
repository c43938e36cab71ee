// The repeat window on each journal (journalRules/sentBefore.ts): a file read through the ports as
// the pipeline reads it finds the rows other files sent its numbers the same message within the
// window, whether its message is shared (a group that spans chunks, held by the planner) or
// personal (a group of one row); a row sent before the window, the same number with another
// message, or a new number is sent.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, it } from 'node:test';
import { intakeFile } from '../pg/intakeRun.js';
import { groupKey } from '../../src/plan/groups.js';
import { onEachJournal, type Subject } from './journals.js';

const DAY = { ms: 86_400_000, text: '24h' };
const SHARED = 'promo';

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'smsdrop-repeat-window-'));
after(() => fs.rmSync(dir, { recursive: true, force: true }));

let files = 0;
/** A file of [number, value] rows, all of template 7. */
function csv(rows: ReadonlyArray<readonly [string, string]>): string {
  const file = path.join(dir, `list-${++files}.csv`);
  fs.writeFileSync(
    file,
    ['mobile,template,var1', ...rows.map((r) => `${r[0]},7,${r[1]}`)].join('\n'),
  );
  return file;
}

/** Reads the file, then marks its batches accepted by an attempt `hoursAgo`, and the file done. */
async function sent(j: Subject, rows: ReadonlyArray<readonly [string, string]>, hoursAgo: number) {
  const { fileId } = await intakeFile(csv(rows), { files: j.handle.files });
  const at = new Date(Date.now() - hoursAgo * 3_600_000).toISOString();
  await j.run(
    `INSERT INTO attempts (batch_id, req_id, started_at, finished_at, outcome, status_code)
     SELECT id, req_id, ${j.rules.dialect.storedTime('?')}, ${j.rules.dialect.storedTime('?')}, 'accepted', '000000'
     FROM batches WHERE file_id = ?`,
    at,
    at,
    fileId,
  );
  await j.run("UPDATE batches SET state = 'accepted', attempts = 1 WHERE file_id = ?", fileId);
  await j.run("UPDATE files SET status = 'done', finished_at = ? WHERE id = ?", at, fileId);
  return fileId;
}

/** Each row of the file by line: its intake, and the file and line of the row it repeats. */
async function rowsOf(j: Subject, fileId: number): Promise<Map<number, string>> {
  const rows = await j.all<{
    line: number;
    intake: string;
    file: number | null;
    of: number | null;
  }>(
    `SELECT r.line, r.intake, o.file_id AS file, o.line AS of FROM rows r
     LEFT JOIN rows o ON o.id = r.duplicate_of WHERE r.file_id = ? ORDER BY r.line`,
    fileId,
  );
  return new Map(
    rows.map((r) => [
      Number(r.line),
      r.file === null ? r.intake : `${r.intake} of ${Number(r.file)}:${Number(r.of)}`,
    ]),
  );
}

onEachJournal('the repeat window', ({ open }) => {
  it('finds the rows other files sent within the window, by message and number, and no others', async () => {
    const j = await open();
    const recent = await sent(
      j,
      [
        ['13800000001', SHARED],
        ['13800000002', SHARED],
        ['13900000001', 'order 1'],
      ],
      1,
    );
    await sent(
      j,
      [
        ['13800000003', SHARED],
        ['13900000002', 'order 2'],
      ],
      25,
    );
    // Over a chunk (100 rows) of the shared message first: its group is held when the repeats
    // of it come, in the next chunk.
    const filler = Array.from(
      { length: 150 },
      (_, i) => [`1370000${String(i).padStart(4, '0')}`, SHARED] as const,
    );
    const { fileId } = await intakeFile(
      csv([
        ...filler,
        ['13800000001', SHARED], // line 152
        ['13800000003', SHARED], // sent before the window
        ['13800000004', SHARED], // a new number
        ['13900000001', 'order 1'], // a personal message sent within the window
        ['13900000002', 'order 2'], // sent before the window
        ['13800000002', 'other'], // the same number, another message
        ['13800000002', SHARED], // line 158
      ]),
      {
        files: j.handle.files,
        sentBefore: async (id) => j.handle.reads.sentBefore(id, DAY),
      },
    );
    const rows = await rowsOf(j, fileId);
    assert.deepEqual(
      [152, 153, 154, 155, 156, 157, 158].map((line) => rows.get(line)),
      [
        `duplicate of ${recent}:2`,
        'valid',
        'valid',
        `duplicate of ${recent}:4`,
        'valid',
        'valid',
        `duplicate of ${recent}:3`,
      ],
    );
    assert.equal(rows.get(2), 'valid');
    const counts = await j.get<{ repeats: number }>(
      'SELECT repeats FROM files WHERE id = ?',
      fileId,
    );
    assert.equal(Number(counts?.repeats), 3);
  });

  it('needs no look-up (SQLite), or finds nothing, when no other file has rows the window counts', async () => {
    const j = await open();
    await sent(j, [['13800000001', SHARED]], 30);
    const lookup = await j.handle.reads.sentBefore(999_999, DAY);
    // PostgreSQL makes one anyway: a small file another node reads beside this one may be counted
    // before this intake ends (docs/postgres.md). It finds nothing.
    if (j.kind === 'SQLite') return assert.equal(lookup, undefined);
    assert.ok(lookup);
    const { keyHash, appId, templateId, datasJson } = groupKey('app', '7', [SHARED]);
    await lookup.prepare?.([{ keyHash, appId, templateId, datasJson }]);
    const message = lookup(keyHash, appId, templateId, datasJson)!;
    await lookup.prepareNumbers?.([[message, '13800000001']]);
    assert.equal(message.rowOf('13800000001'), undefined);
  });
});
