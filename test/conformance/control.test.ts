// The ControlStore port on each journal: an operator's approve, pause, resume and cancel of a file
// (src/journalRules/control.ts), and the attempt start that obeys them: once a command has
// returned, no request of a file that is not free to go starts.
import assert from 'node:assert/strict';
import { it } from 'node:test';
import { onEachJournal, type Subject } from './journals.js';
import { batchOf, seedBatch, seedFile, type Seeded, startClaimed } from './seed.js';

/** Whether the batch's attempt starts now (it is claimed first, as the sender does). */
async function starts(j: Subject, at: Seeded, batchId: number): Promise<boolean> {
  return (await startClaimed(j, at, batchId)) !== undefined;
}

async function events(j: Subject): Promise<string[]> {
  return (await j.handle.outbox.undelivered('t', 100)).map((e) => e.event);
}

onEachJournal('the ControlStore', ({ open }) => {
  it('holds every request of a paused file from the moment pause returns, until resume', async () => {
    const j = await open();
    const at = await seedFile(j);
    const first = await seedBatch(j, at, 'planned', ['13800000001']);
    const second = await seedBatch(j, at, 'planned', ['13800000002'], 3);
    const paused = await j.handle.control.command(at.fileId, { action: 'pause', by: 'cli' });
    assert.deepEqual([paused.control, paused.changed], ['paused', true]);
    assert.equal(await starts(j, at, first), false, 'no attempt starts while paused');
    assert.equal((await batchOf(j, first)).state, 'planned');
    const again = await j.handle.control.command(at.fileId, { action: 'pause', by: 'api' });
    assert.equal(again.changed, false, 'a second pause changes nothing');
    await j.handle.control.command(at.fileId, { action: 'resume', by: 'cli' });
    assert.equal(await starts(j, at, first), true);
    assert.equal(await starts(j, at, second), true);
  });

  it('cancels the planned batches, leaves a sending one alone, and ends a doubted one unknown', async () => {
    const j = await open();
    j.handle.outbox.setTargets(['t']);
    const at = await seedFile(j);
    const planned = await seedBatch(j, at, 'planned', ['13800000001', '13800000002']);
    const sending = await seedBatch(j, at, 'sending', ['13800000003'], 4);
    const doubted = await seedBatch(j, at, 'planned', ['13800000004'], 5);
    await j.run('UPDATE batches SET maybe_sent = 1 WHERE id = ?', doubted);
    const result = await j.handle.control.command(at.fileId, { action: 'cancel', by: 'api' });
    assert.deepEqual([result.control, result.cancelled], ['cancelled', 2]);
    assert.equal((await batchOf(j, planned)).state, 'cancelled');
    assert.equal(
      (await batchOf(j, sending)).state,
      'sending',
      'its request may be out: it ends as any',
    );
    assert.equal(
      (await batchOf(j, doubted)).state,
      'unknown',
      'it may have been sent: never "cancelled"',
    );
    const rows = await j.all<{ line: number; status: string }>(
      'SELECT line, status FROM row_results WHERE file_id = ? ORDER BY line',
      at.fileId,
    );
    assert.deepEqual(
      rows.map((r) => r.status),
      ['cancelled', 'cancelled', 'pending', 'unknown'],
    );
    const file = await j.get<{ cancelled: number | string }>(
      'SELECT cancelled FROM v_files WHERE id = ?',
      at.fileId,
    );
    assert.equal(Number(file!.cancelled), 2);
    assert.deepEqual(await events(j), ['file.cancelled']);
    // A batch that comes back to planned after the cancel (an answer asking for a retry) goes too.
    await j.run("UPDATE batches SET state = 'planned' WHERE id = ?", sending);
    assert.equal(await j.handle.control.cancelLeftovers(at.fileId), 1);
    assert.equal((await batchOf(j, sending)).state, 'cancelled');
  });

  it('holds a file read with approval on until it is approved, and a scheduled one until its time', async () => {
    const j = await open();
    j.handle.outbox.setTargets(['t']);
    const at = await seedFile(j);
    await j.run("UPDATE files SET control = 'held' WHERE id = ?", at.fileId);
    const batchId = await seedBatch(j, at, 'planned', ['13800000001']);
    assert.equal(await starts(j, at, batchId), false);
    const later = new Date(Date.now() + 3_600_000).toISOString();
    const approved = await j.handle.control.command(at.fileId, {
      action: 'approve',
      at: later,
      by: 'cli',
    });
    assert.deepEqual([approved.control, approved.startAt], [null, later]);
    assert.equal(await starts(j, at, batchId), false, 'not before its time');
    const now = new Date(Date.now() - 1_000).toISOString();
    await j.handle.control.command(at.fileId, { action: 'approve', at: now, by: 'cli' });
    assert.equal(await starts(j, at, batchId), true);
    assert.deepEqual(await events(j), ['file.approved', 'file.approved']);
  });

  it('refuses what the file’s state does not allow, with E_CONTROL_REFUSED, writing nothing', async () => {
    const j = await open();
    const done = await seedFile(j, 'done');
    await assert.rejects(
      Promise.resolve(j.handle.control.command(done.fileId, { action: 'pause', by: 'cli' })),
      { code: 'E_CONTROL_REFUSED' },
    );
    const held = await seedFile(j);
    await j.run("UPDATE files SET control = 'held' WHERE id = ?", held.fileId);
    for (const action of ['pause', 'resume'] as const)
      await assert.rejects(
        Promise.resolve(j.handle.control.command(held.fileId, { action, by: 'cli' })),
        { code: 'E_CONTROL_REFUSED' },
      );
    const cancelled = await seedFile(j);
    await j.handle.control.command(cancelled.fileId, { action: 'cancel', by: 'cli' });
    await assert.rejects(
      Promise.resolve(j.handle.control.command(cancelled.fileId, { action: 'resume', by: 'cli' })),
      { code: 'E_CONTROL_REFUSED' },
    );
    assert.deepEqual(await j.handle.control.control(held.fileId), {
      fileId: held.fileId,
      name: (await j.handle.reads.file(held.fileId))!.name,
      control: 'held',
      startAt: null,
    });
  });
});
