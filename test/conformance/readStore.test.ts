// The ReadStore port on each journal, on one small file seeded with a row of every status: the
// report (its line of counts, failures, invalid rows), the export's rows, what status and
// /metrics read, and the dry run's preview.
import assert from 'node:assert/strict';
import { it } from 'node:test';
import type { Pages } from '../../src/ports/awaitable.js';
import type { ResultFormat } from '../../src/ports/results.js';
import { onEachJournal, type Subject } from './journals.js';
import {
  seedAnsweredAttempt,
  seedBatch,
  seedFile,
  seedGroup,
  seedRow,
  type Seeded,
} from './seed.js';

const SENT = '2026-12-01T09:00:00.000Z';
const ANSWERED = '2026-12-01T09:00:01.000Z';

/**
 * A file being sent: lines 2-3 accepted, 4 failed, 5 unknown, 6 pending, 7-8 invalid, 9 a
 * duplicate of line 2; three requests answered.
 */
async function smallFile(j: Subject): Promise<Seeded & { name: string; sha256: string }> {
  const at = await seedFile(j, 'sending');
  const accepted = await seedBatch(j, at, 'accepted', ['13800000002', '13800000003'], 2);
  const failed = await seedBatch(j, at, 'failed', ['13800000004'], 4);
  const unknown = await seedBatch(j, at, 'unknown', ['13800000005'], 5);
  await seedBatch(j, at, 'planned', ['13800000006'], 6);
  await seedRow(j, at, 7, { intake: 'invalid', error: 'not a phone number' });
  await seedRow(j, at, 8, { intake: 'invalid', error: 'empty phone' });
  const first = await j.get<{ id: number }>(
    'SELECT id FROM rows WHERE file_id = ? AND line = 2',
    at.fileId,
  );
  await seedRow(j, at, 9, { intake: 'duplicate', duplicateOf: first!.id });
  const answer = 'UPDATE batches SET status_code = ?, status_msg = ? WHERE id = ?';
  await j.run(answer, '000000', 'ok', accepted);
  await j.run(answer, '160040', 'bad content', failed);
  await j.run(answer, null, 'no answer', unknown);
  await seedAnsweredAttempt(j, accepted, 'accepted', SENT, ANSWERED, '000000');
  await seedAnsweredAttempt(j, failed, 'failed', SENT, ANSWERED, '160040');
  await seedAnsweredAttempt(j, unknown, 'in-doubt', SENT, ANSWERED);
  await j.run('UPDATE files SET rows = 8, invalid = 2, duplicates = 1 WHERE id = ?', at.fileId);
  const file = await j.handle.files.file(at.fileId);
  return { ...at, name: file!.name, sha256: file!.sha256 };
}

async function rowsOf<T>(pages: Pages<T>): Promise<T[]> {
  const rows: T[] = [];
  for await (const page of pages) rows.push(...page);
  return rows;
}

const COUNTS = {
  rows: 8,
  invalid: 2,
  duplicates: 1,
  accepted: 2,
  failed: 1,
  unknown: 1,
  pending: 1,
  requests: 3,
};

onEachJournal('the ReadStore', ({ open }) => {
  it('gives a file’s line: its rows counted by status, and finds it by name and bytes', async () => {
    const j = await open();
    const at = await smallFile(j);
    const line = await j.handle.reads.fileLine(at.fileId);
    assert.deepEqual(line, {
      id: at.fileId,
      name: at.name,
      sha256: at.sha256,
      status: 'sending',
      ...COUNTS,
      started_at: null,
      finished_at: null,
      cancelled: 0,
      control: null,
      start_at: null,
    });
    assert.deepEqual(await j.handle.reads.listFiles(), [line]);
    assert.deepEqual(await j.handle.reads.unfinishedFileLines(), [line]);
    assert.deepEqual(await j.handle.reads.repeatsOf(at.fileId), 0);
    const named = await j.handle.reads.filesNamed(at.name);
    assert.deepEqual(
      named.map((f) => f.id),
      [at.fileId],
    );
    const bySha = await j.handle.reads.filesByShaPrefix(at.sha256.toUpperCase());
    assert.deepEqual(
      bySha.map((f) => f.id),
      [at.fileId],
    );
    assert.deepEqual(await j.handle.reads.recordsOfBytes(at.sha256), [
      { id: at.fileId, pruned: false },
    ]);
  });

  it('reports a file’s failures by status and code, and its invalid rows by reason and line', async () => {
    const j = await open();
    const at = await smallFile(j);
    assert.deepEqual(await j.handle.reads.failureCounts(at.fileId), [
      { status: 'failed', status_code: '160040', count: 1, sample_message: 'bad content' },
      { status: 'unknown', status_code: null, count: 1, sample_message: 'no answer' },
    ]);
    assert.deepEqual(await j.handle.reads.invalidReasons(at.fileId), [
      { reason: 'empty phone', count: 1 },
      { reason: 'not a phone number', count: 1 },
    ]);
    assert.deepEqual(await j.handle.reads.invalidRows(at.fileId, 1), [
      { line: 7, reason: 'not a phone number' },
    ]);
    assert.deepEqual(await j.handle.reads.requestTiming(at.fileId), {
      requests: 3,
      first_send: SENT,
      last_send: ANSWERED,
    });
  });

  it('exports every row in file order with its status, or only the statuses asked for', async () => {
    const j = await open();
    const at = await smallFile(j);
    const all = await rowsOf(j.handle.reads.recipients(at.fileId, []));
    assert.deepEqual(
      all.map((r) => [r.line, r.status, r.status_code, r.status_msg]),
      [
        [2, 'accepted', '000000', 'ok'],
        [3, 'accepted', '000000', 'ok'],
        [4, 'failed', '160040', 'bad content'],
        [5, 'unknown', null, 'no answer'],
        [6, 'pending', null, null],
        [7, 'invalid', null, 'not a phone number'],
        [8, 'invalid', null, 'empty phone'],
        [9, 'duplicate', null, 'duplicate of line 2'],
      ],
    );
    assert.deepEqual(all[0], {
      line: 2,
      phone_raw: '13800000002',
      app_id: 'app',
      template_id: '1',
      datas: '["x"]',
      extras: null,
      status: 'accepted',
      status_code: '000000',
      status_msg: 'ok',
    });
    const some = await rowsOf(j.handle.reads.recipients(at.fileId, ['failed', 'unknown']));
    assert.deepEqual(
      some.map((r) => r.line),
      [4, 5],
    );
  });

  it('writes the result lines in row order, a pending row holding back the final pages', async () => {
    const j = await open();
    const at = await smallFile(j);
    const format: ResultFormat = {
      tail: (cells) => `T:${cells.join('|')}`,
      oddRow: (row) => `O:${row.join('|')}`,
    };
    const cursor = j.handle.reads.resultPages(at.fileId, format);
    assert.deepEqual(await cursor.finalPages(performance.now() + 60_000), [], 'line 6 pending');
    const text = (await rowsOf(cursor.restPages())).join('');
    cursor.close();
    assert.deepEqual(text.split('\r\n'), [
      '2,13800000002,13800000002,T:accepted|000000|ok||',
      '3,13800000003,13800000003,T:accepted|000000|ok||',
      '4,13800000004,13800000004,T:failed|160040|bad content||',
      '5,13800000005,13800000005,T:unknown||no answer||',
      '6,13800000006,13800000006,T:pending||||',
      'O:7|raw-7||invalid||not a phone number||',
      'O:8|raw-8||invalid||empty phone||',
      'O:9|raw-9|13900000009|duplicate||duplicate of line 2||',
      '',
    ]);
  });

  it('gives the rejected file its invalid rows in row order and their count', async () => {
    const j = await open();
    const at = await smallFile(j);
    await j.run('UPDATE rows SET extras = ? WHERE file_id = ? AND line = 7', '["e"]', at.fileId);
    const rejected = await rowsOf(j.handle.reads.rejectedRows(at.fileId));
    assert.deepEqual(
      rejected.map((r) => [r.line, r.error, r.phone_raw, r.extras, r.cells]),
      [
        [7, 'not a phone number', 'raw-7', '["e"]', null],
        [8, 'empty phone', 'raw-8', null, null],
      ],
    );
    assert.deepEqual(await j.handle.reads.rejectedHeader(at.fileId), {
      invalid: 2,
      columns: undefined,
      extras: [],
    });
    assert.equal(await j.handle.reads.rejectedHeader(at.fileId + 1000), undefined);
  });

  it('holds a page back until each batch it waits for has settled, in any order', async () => {
    const j = await open();
    const at = await seedFile(j, 'sending');
    const [a, b, c] = [
      await seedBatch(j, at, 'planned', ['13800000002'], 2),
      await seedBatch(j, at, 'planned', ['13800000003'], 3),
      await seedBatch(j, at, 'planned', ['13800000004'], 4),
    ];
    const cursor = j.handle.reads.resultPages(at.fileId, {
      tail: (cells) => cells[0],
      oddRow: (row) => row.join('|'),
    });
    const pages = () => cursor.finalPages(performance.now() + 60_000);
    const settle = (id: number) => j.run("UPDATE batches SET state = 'accepted' WHERE id = ?", id);
    assert.deepEqual(await pages(), [], 'all three planned');
    await settle(a);
    assert.deepEqual(await pages(), [], 'the first settled');
    await settle(c);
    assert.deepEqual(await pages(), [], 'the middle one still planned');
    await settle(b);
    assert.deepEqual(await pages(), [
      '2,13800000002,13800000002,accepted\r\n3,13800000003,13800000003,accepted\r\n4,13800000004,13800000004,accepted\r\n',
    ]);
    cursor.close();
  });

  it('counts what /metrics shows: files and rows by status, numbers and requests by outcome', async () => {
    const j = await open();
    const at = await smallFile(j);
    await seedFile(j, 'done');
    assert.deepEqual(await j.handle.reads.filesByStatus(), [
      { status: 'done', files: 1 },
      { status: 'sending', files: 1 },
    ]);
    assert.deepEqual(await j.handle.reads.rowsByStatus(), {
      accepted: 2,
      failed: 1,
      unknown: 1,
      invalid: 2,
      duplicate: 1,
      pending: 1,
    });
    assert.deepEqual(await j.handle.reads.numbersByOutcome(), [
      { outcome: 'accepted', code: '000000', numbers: 2 },
      { outcome: 'failed', code: '160040', numbers: 1 },
      { outcome: 'unknown', code: '', numbers: 1 },
    ]);
    assert.deepEqual(await j.handle.reads.requestsByOutcome(), [
      { outcome: 'accepted', requests: 1 },
      { outcome: 'failed', requests: 1 },
      { outcome: 'in-doubt', requests: 1 },
    ]);
    assert.equal(await j.handle.reads.numbersToSend(), 1);
    assert.equal(await j.handle.reads.numbersToSend([at.sha256]), 1);
    assert.equal(await j.handle.reads.numbersToSend([]), 0);
  });

  it('tells status what is out, what answered last and since when', async () => {
    const j = await open();
    const at = await smallFile(j);
    await seedBatch(j, at, 'sending', ['13800000010', '13800000011'], 10);
    assert.deepEqual(await j.handle.reads.inFlight(at.fileId), { requests: 1, numbers: 2 });
    assert.deepEqual(await j.handle.reads.requestsFinishedSince(SENT), { count: 3, first: SENT });
    assert.deepEqual(await j.handle.reads.requestsFinishedSince('2026-12-02'), {
      count: 0,
      first: null,
    });
    assert.deepEqual(await j.handle.reads.answersWithCodesSince(['160040', '999999'], SENT), [
      { code: '160040', count: 1 },
    ]);
    const last = await j.handle.reads.lastAnswer();
    assert.equal(last?.finished_at, ANSWERED);
    const held = await j.handle.reads.oldestHeldFile();
    assert.deepEqual([held?.id, held?.status], [at.fileId, 'sending']);
    assert.equal(await j.handle.reads.prunedFileCount(), 0);
  });

  it('previews what is left to send: each group’s message and its numbers still to go', async () => {
    const j = await open();
    const at = await smallFile(j);
    assert.deepEqual(await rowsOf(j.handle.reads.groupsToSend(at.fileId)), [
      { templateId: '1', datas: '["x"]', numbers: 1 },
    ]);
    assert.equal(await j.handle.reads.mostValues(at.fileId), 1);
  });

  it('counts a template’s rows by how many values they give, only when they differ', async () => {
    const j = await open();
    const at = await smallFile(j);
    assert.deepEqual(await j.handle.reads.unevenValueCounts(at.fileId), []);
    const twoValues = await seedGroup(j, at.fileId, '["x","y"]');
    await seedBatch(j, { fileId: at.fileId, groupId: twoValues }, 'planned', ['13800000012'], 12);
    assert.deepEqual(await j.handle.reads.unevenValueCounts(at.fileId), [
      { templateId: '1', values: 1, rows: 5, firstLine: 2 },
      { templateId: '1', values: 2, rows: 1, firstLine: 12 },
    ]);
    assert.equal(await j.handle.reads.mostValues(at.fileId), 2);
  });
});
