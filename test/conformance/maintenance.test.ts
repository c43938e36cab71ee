// Maintenance.prune on each journal: a file that ended before the cut-off loses its rows, groups,
// batches and attempts and keeps its line and counts; a file that holds a batch that may still go,
// is busy, is unfinished or ended later is kept; a dry run says what it would delete and deletes
// nothing; suppressed numbers are forgotten only when asked.
import assert from 'node:assert/strict';
import { it } from 'node:test';
import type { BusyFiles } from '../../src/ports/maintenance.js';
import { onEachJournal, type Subject } from './journals.js';
import { seedAnsweredAttempt, seedBatch, seedFile, seedRow, type Seeded } from './seed.js';

const ENDED = '2026-11-01T10:00:00.000Z';
const CUT_OFF = '2026-11-15T00:00:00.000Z';
const NONE_BUSY: BusyFiles = { has: () => false };

/** A file that ended at `finishedAt`: 2 numbers accepted, 1 failed, an invalid row; 2 requests. */
async function endedFile(j: Subject, finishedAt = ENDED, status = 'done'): Promise<Seeded> {
  const at = await seedFile(j, status);
  const accepted = await seedBatch(j, at, 'accepted', ['13800000001', '13800000002'], 2);
  const failed = await seedBatch(j, at, 'failed', ['13800000003'], 4);
  await seedAnsweredAttempt(
    j,
    accepted,
    'accepted',
    '2026-11-01T09:00:00.000Z',
    '2026-11-01T09:00:01.000Z',
  );
  await seedAnsweredAttempt(
    j,
    failed,
    'failed',
    '2026-11-01T09:00:02.000Z',
    '2026-11-01T09:00:03.000Z',
  );
  await seedRow(j, at, 5, { intake: 'invalid', error: 'bad' });
  await j.run(
    'UPDATE files SET rows = 4, invalid = 1, finished_at = ? WHERE id = ?',
    finishedAt,
    at.fileId,
  );
  return at;
}

/** How many of the file's records of each kind are left. */
async function recordsLeft(j: Subject, fileId: number): Promise<number[]> {
  const counts: number[] = [];
  for (const table of ['rows', 'groups', 'batches'])
    counts.push(
      (await j.get<{ n: number }>(`SELECT count(*) AS n FROM ${table} WHERE file_id = ?`, fileId))!
        .n,
    );
  const attempts = await j.get<{ n: number }>(
    'SELECT count(*) AS n FROM attempts a JOIN batches b ON b.id = a.batch_id WHERE b.file_id = ?',
    fileId,
  );
  return [...counts, attempts!.n];
}

onEachJournal('Maintenance.prune', ({ open }) => {
  it('prunes a file that ended before the cut-off; its line keeps its counts and request times', async () => {
    const j = await open();
    const at = await endedFile(j);
    const before = await j.handle.reads.fileLine(at.fileId);
    const numbers = await j.handle.reads.numbersByOutcome();
    const requests = await j.handle.reads.requestsByOutcome();
    const result = await j.handle.maintenance.prune({ endedBefore: CUT_OFF }, NONE_BUSY);
    assert.deepEqual(
      result.files.map((f) => [f.id, f.status, f.finished_at]),
      [[at.fileId, 'done', ENDED]],
    );
    assert.deepEqual(result.records, { rows: 4, groups: 1, batches: 2, attempts: 2 });
    assert.deepEqual(await recordsLeft(j, at.fileId), [0, 0, 0, 0]);
    assert.deepEqual(await j.handle.reads.fileLine(at.fileId), before);
    assert.deepEqual(await j.handle.reads.requestTiming(at.fileId), {
      requests: 2,
      first_send: '2026-11-01T09:00:00.000Z',
      last_send: '2026-11-01T09:00:03.000Z',
    });
    assert.deepEqual([...(await j.handle.reads.prunedFileIds())], [at.fileId]);
    assert.deepEqual(await j.handle.reads.numbersByOutcome(), numbers, '/metrics never goes down');
    assert.deepEqual(await j.handle.reads.requestsByOutcome(), requests);
    assert.ok((await j.handle.files.file(at.fileId))?.pruned_at, 'marked pruned');
    const again = await j.handle.maintenance.prune({ endedBefore: CUT_OFF }, NONE_BUSY);
    assert.deepEqual(again.files, [], 'pruned once');
  });

  it('keeps a file holding a batch that may still go: in flight, or planned after an attempt', async () => {
    const j = await open();
    const inFlight = await endedFile(j);
    await seedBatch(j, inFlight, 'sending', ['13800000004'], 6);
    const plannedAgain = await endedFile(j);
    const batch = await seedBatch(j, plannedAgain, 'planned', ['13800000005'], 6);
    await seedAnsweredAttempt(j, batch, 'rate-limited');
    const plain = await endedFile(j);
    const result = await j.handle.maintenance.prune({ endedBefore: CUT_OFF }, NONE_BUSY);
    assert.deepEqual(
      result.files.map((f) => f.id),
      [plain.fileId],
    );
    assert.deepEqual(await recordsLeft(j, inFlight.fileId), [5, 1, 3, 2]);
    assert.deepEqual(await recordsLeft(j, plannedAgain.fileId), [5, 1, 3, 3]);
  });

  it('keeps files unfinished, ended after the cut-off, or busy; prunes a refused one', async () => {
    const j = await open();
    const sending = await endedFile(j, ENDED, 'sending');
    const recent = await endedFile(j, '2026-11-20T00:00:00.000Z');
    const busy = await endedFile(j);
    const refused = await endedFile(j, ENDED, 'refused');
    const result = await j.handle.maintenance.prune(
      { endedBefore: CUT_OFF },
      { has: (id) => id === busy.fileId },
    );
    assert.deepEqual(
      result.files.map((f) => [f.id, f.status]),
      [[refused.fileId, 'refused']],
    );
    for (const kept of [sending, recent, busy])
      assert.deepEqual(await recordsLeft(j, kept.fileId), [4, 1, 2, 2]);
  });

  it('prunes a file whose batches were split whole, its halves’ counts kept', async () => {
    const j = await open();
    const at = await endedFile(j);
    const parent = await seedBatch(j, at, 'split', ['13800000006', '13800000007'], 6);
    const halves = [
      await seedBatch(j, at, 'accepted', ['13800000006'], 8),
      await seedBatch(j, at, 'failed', ['13800000007'], 9),
    ];
    await j.run('UPDATE batches SET parent_id = ? WHERE id IN (?, ?)', parent, ...halves);
    await seedAnsweredAttempt(j, parent, 'number-rejected');
    const before = await j.handle.reads.fileLine(at.fileId);
    assert.deepEqual([before.accepted, before.failed], [3, 2]);
    const result = await j.handle.maintenance.prune({ endedBefore: CUT_OFF }, NONE_BUSY);
    assert.deepEqual(result.records, { rows: 8, groups: 1, batches: 5, attempts: 3 });
    assert.deepEqual(await recordsLeft(j, at.fileId), [0, 0, 0, 0]);
    assert.deepEqual(await j.handle.reads.fileLine(at.fileId), before);
  });

  it('a dry run says what it would delete and deletes nothing', async () => {
    const j = await open();
    const at = await endedFile(j);
    await j.run(
      "INSERT INTO suppressed (phone, reason, source, added_at) VALUES ('13800000009', 'x', 'list', ?)",
      ENDED,
    );
    const result = await j.handle.maintenance.prune(
      { endedBefore: CUT_OFF, dryRun: true, suppressed: true },
      NONE_BUSY,
    );
    assert.deepEqual(
      [result.files.map((f) => f.id), result.records, result.suppressed],
      [[at.fileId], { rows: 4, groups: 1, batches: 2, attempts: 2 }, 1],
    );
    assert.equal(result.bytesAfter, result.bytesBefore);
    assert.deepEqual(await recordsLeft(j, at.fileId), [4, 1, 2, 2]);
    assert.equal((await j.handle.files.file(at.fileId))?.pruned_at, null);
    assert.equal((await j.handle.suppression.list()).length, 1);
  });

  it('forgets suppressed numbers added before the cut-off only when asked', async () => {
    const j = await open();
    const add = (phone: string, at: string) =>
      j.run(
        "INSERT INTO suppressed (phone, reason, source, added_at) VALUES (?, 'x', 'list', ?)",
        phone,
        at,
      );
    await add('13800000010', ENDED);
    await add('13800000011', '2026-11-20T00:00:00.000Z');
    const kept = await j.handle.maintenance.prune({ endedBefore: CUT_OFF }, NONE_BUSY);
    assert.equal(kept.suppressed, 0);
    assert.equal((await j.handle.suppression.list()).length, 2);
    const asked = await j.handle.maintenance.prune(
      { endedBefore: CUT_OFF, suppressed: true },
      NONE_BUSY,
    );
    assert.equal(asked.suppressed, 1);
    assert.deepEqual(
      (await j.handle.suppression.list()).map((s) => s.phone),
      ['13800000011'],
    );
  });
});
