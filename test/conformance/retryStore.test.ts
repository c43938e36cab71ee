// The RetryStore port on each journal (the rules of src/journalRules/retry.ts): failed batches hand
// their numbers to new batches no bigger than today's limit and become retried; an unknown batch
// that keeps its reqId is planned again as it is; a number another file sent since is a repeat.
import assert from 'node:assert/strict';
import { it } from 'node:test';
import type { SentBeforeLookup } from '../../src/ports/records.js';
import { onEachJournal } from './journals.js';
import { batchOf, seedBatch, seedFile } from './seed.js';

onEachJournal('the RetryStore', ({ open }) => {
  it('moves a failed batch’s numbers to new batches of at most the limit, its rows following', async () => {
    const j = await open();
    const at = await seedFile(j, 'done');
    const phones = ['13800000001', '13800000002', '13800000003'];
    const failed = await seedBatch(j, at, 'failed', phones);
    assert.equal(await j.handle.retry.countRetryable(at.fileId, ['failed']), 3);
    const prepared = await j.handle.retry.prepareRetry(at.fileId, ['failed'], 2);
    assert.deepEqual([prepared.rows, prepared.repeats, prepared.ownReqIdBatchIds], [3, 0, []]);
    assert.equal((await batchOf(j, failed)).state, 'retried');
    const made = await j.all<{ id: number; numbers: number; state: string; parent_id: number }>(
      'SELECT id, numbers, state, parent_id FROM batches WHERE id >= ? ORDER BY id',
      prepared.firstBatchId,
    );
    assert.deepEqual(
      made.map((b) => [b.numbers, b.state, b.parent_id]),
      [
        [2, 'planned', failed],
        [1, 'planned', failed],
      ],
    );
    const rows = await j.all<{ batch_id: number }>(
      'SELECT batch_id FROM rows WHERE file_id = ? ORDER BY line',
      at.fileId,
    );
    assert.deepEqual(
      rows.map((r) => r.batch_id),
      [made[0]!.id, made[0]!.id, made[1]!.id],
    );
    assert.deepEqual(await j.get('SELECT status FROM files WHERE id = ?', at.fileId), {
      status: 'sending',
    });
    const outcome = await j.handle.retry.retryOutcome(at.fileId, prepared);
    assert.deepEqual(outcome, { rows: 3, accepted: 0, failed: 0, unknown: 0, pending: 3 });
  });

  it('plans an unknown batch again under its own reqId when its attempts allow, attempts counted afresh', async () => {
    const j = await open();
    const at = await seedFile(j, 'done');
    const unknown = await seedBatch(j, at, 'unknown', ['13800000004']);
    const req = (await batchOf(j, unknown)).req_id;
    await j.run(
      `INSERT INTO attempts (batch_id, req_id, started_at, finished_at, outcome)
       VALUES (?, ?, ${j.rules.dialect.storedTime("'2026-12-01T08:00:00.000Z'")}, ${j.rules.dialect.storedTime("'2026-12-01T08:01:00.000Z'")}, 'in-doubt')`,
      unknown,
      req,
    );
    await j.run('UPDATE batches SET attempts = 3 WHERE id = ?', unknown);
    const keeps = { keepsOwnReqId: () => true, newReqIds: false };
    assert.deepEqual(
      await j.handle.retry.countUnknownByReqId(at.fileId, 200, keeps.keepsOwnReqId),
      { ownReqId: 1, newReqId: 0 },
    );
    const prepared = await j.handle.retry.prepareRetry(at.fileId, ['unknown'], 200, keeps);
    assert.deepEqual(prepared.ownReqIdBatchIds, [unknown]);
    const b = await batchOf(j, unknown);
    assert.deepEqual(
      [b.state, b.req_id, b.attempts, b.maybe_sent, b.first_doubt_at],
      ['planned', req, 0, 1, '2026-12-01T08:00:00.000Z'],
    );
  });

  it('leaves an unknown batch alone unless new reqIds are agreed to', async () => {
    const j = await open();
    const at = await seedFile(j, 'done');
    const unknown = await seedBatch(j, at, 'unknown', ['13800000005']);
    const prepared = await j.handle.retry.prepareRetry(at.fileId, ['unknown'], 200, {
      keepsOwnReqId: () => false,
      newReqIds: false,
    });
    assert.equal(prepared.rows, 0);
    assert.equal((await batchOf(j, unknown)).state, 'unknown');
  });

  it('does not resend a number another file sent the same message to: its row is a repeat', async () => {
    const j = await open();
    const earlier = await seedFile(j, 'done');
    const sentRow = await j.get<{ id: number }>(
      "INSERT INTO rows (file_id, line, phone_raw, phone, group_id, intake) VALUES (?, 2, '13800000006', '13800000006', ?, 'valid') RETURNING id",
      earlier.fileId,
      earlier.groupId,
    );
    const at = await seedFile(j, 'done');
    const failed = await seedBatch(j, at, 'failed', ['13800000006', '13800000007']);
    const sentBefore: SentBeforeLookup = () => ({
      size: 1,
      rowOf: (phone) => (phone === '13800000006' ? sentRow!.id : undefined),
    });
    const prepared = await j.handle.retry.prepareRetry(
      at.fileId,
      ['failed'],
      200,
      undefined,
      sentBefore,
    );
    assert.deepEqual([prepared.rows, prepared.repeats], [1, 1]);
    const repeat = await j.get(
      "SELECT intake, duplicate_of, batch_id FROM rows WHERE file_id = ? AND phone = '13800000006'",
      at.fileId,
    );
    assert.deepEqual(repeat, { intake: 'duplicate', duplicate_of: sentRow!.id, batch_id: null });
    assert.deepEqual((await batchOf(j, failed)).numbers, 1);
    const counts = await j.get(
      'SELECT rows, duplicates, repeats FROM files WHERE id = ?',
      at.fileId,
    );
    assert.deepEqual(counts, { rows: 2, duplicates: 1, repeats: 1 }, 'the file recounted');
  });
});
