// The OutboxStore port on each journal: no event is written while no receiver is set; a file's
// change of status writes its event (once per receiver, one id for all) with the change; events
// are handed out oldest first per receiver until delivered, and a failed delivery is counted.
import assert from 'node:assert/strict';
import { it } from 'node:test';
import type { NewFile } from '../../src/ports/records.js';
import type { EventBody, OutboxRow } from '../../src/ports/events.js';
import { onEachJournal, type Subject } from './journals.js';
import { seedBatch, seedGroup } from './seed.js';

let files = 0;
const newFile = (): NewFile => ({
  sha256: `outbox-${process.pid}-${++files}`,
  name: `list${files}.csv`,
  path: `/inbox/list${files}.csv`,
  size: 100,
  encoding: 'utf-8',
});

const bodyOf = (row: OutboxRow) => JSON.parse(row.body) as EventBody;

async function waiting(j: Subject, target: string): Promise<OutboxRow[]> {
  return j.handle.outbox.undelivered(target, 100);
}

onEachJournal('the OutboxStore', ({ open }) => {
  it('writes no event while no receiver is set', async () => {
    const j = await open();
    assert.equal(j.handle.outbox.hasTargets(), false);
    const file = await j.handle.files.create(newFile());
    await j.handle.files.status(file.id, 'done');
    await j.handle.outbox.recordEventNow('file.failed', { name: 'x.txt', status: 'failed' });
    await j.handle.daemon.setPause({ paused: '111142: balance' });
    assert.deepEqual(await j.get('SELECT count(*) AS n FROM webhook_outbox'), { n: 0 });
  });

  it('writes a file’s taking and its end with the change, once per receiver under one id', async () => {
    const j = await open();
    j.handle.outbox.setTargets(['r1', 'r2']);
    assert.equal(j.handle.outbox.hasTargets(), true);
    const file = await j.handle.files.create(newFile());
    const groupId = await seedGroup(j, file.id);
    await seedBatch(j, { fileId: file.id, groupId }, 'accepted', ['13800000001', '13800000002']);
    await j.run('UPDATE files SET rows = 2 WHERE id = ?', file.id);
    await j.handle.files.status(file.id, 'done');
    const [r1, r2] = [await waiting(j, 'r1'), await waiting(j, 'r2')];
    assert.deepEqual(
      r1.map((e) => e.event),
      ['file.taken', 'file.finished'],
    );
    assert.deepEqual(
      r2.map((e) => bodyOf(e).id),
      r1.map((e) => bodyOf(e).id),
      'one id per event, whatever the receiver',
    );
    const finished = bodyOf(r1[1]!);
    assert.equal(finished.event, 'file.finished');
    assert.deepEqual(finished.file, {
      id: file.id,
      name: file.name,
      status: 'done',
      counts: {
        rows: 2,
        invalid: 0,
        duplicates: 0,
        repeats: 0,
        accepted: 2,
        failed: 0,
        unknown: 0,
        cancelled: 0,
        pending: 0,
        requests: 0,
      },
    });
    assert.equal(bodyOf(r1[0]!).file?.status, 'intake', 'taken: as it was when written');
  });

  it('writes file.taken when an unfinished file is taken again or grows, none for a done one', async () => {
    const j = await open();
    j.handle.outbox.setTargets(['r1']);
    const file = await j.handle.files.create(newFile());
    await j.handle.files.status(file.id, 'sending');
    await j.handle.files.noteTaken(file.sha256);
    const grown = { ...newFile(), size: 200 };
    await j.handle.files.adopt(file.id, grown);
    const done = await j.handle.files.create(newFile());
    await j.handle.files.status(done.id, 'done');
    await j.handle.files.noteTaken(done.sha256);
    const bodies = (await waiting(j, 'r1')).map(bodyOf);
    assert.deepEqual(
      bodies.map((b) => [b.event, b.file?.id, b.file?.name, b.file?.status]),
      [
        ['file.taken', file.id, file.name, 'intake'],
        ['file.taken', file.id, file.name, 'sending'],
        ['file.taken', file.id, grown.name, 'intake'],
        ['file.taken', done.id, done.name, 'intake'],
        ['file.finished', done.id, done.name, 'done'],
      ],
    );
    assert.deepEqual(bodies[1]!.file?.counts, bodies[0]!.file?.counts, 'the same counts');
  });

  it('writes a refused file’s event with its reason', async () => {
    const j = await open();
    j.handle.outbox.setTargets(['r1']);
    const file = await j.handle.files.create(newFile());
    await j.handle.files.refuse(file.id, (sent) => `no phone column (${sent} requests sent)`);
    const [, failed] = await waiting(j, 'r1');
    assert.ok(failed, 'a second event');
    const body = bodyOf(failed);
    assert.deepEqual(
      [body.event, body.file?.status, body.reason],
      ['file.failed', 'refused', 'no phone column (0 requests sent)'],
    );
  });

  it('writes an event now about a file it does not know, or about no file', async () => {
    const j = await open();
    j.handle.outbox.setTargets(['r1']);
    await j.handle.outbox.recordEventNow(
      'file.failed',
      { name: 'x.txt', status: 'failed' },
      'not a .csv',
    );
    await j.handle.outbox.recordEventNow('file.late', null, 'no progress');
    const bodies = (await waiting(j, 'r1')).map(bodyOf);
    assert.deepEqual(
      bodies.map((b) => [b.event, b.file, b.reason]),
      [
        ['file.failed', { id: null, name: 'x.txt', status: 'failed', counts: null }, 'not a .csv'],
        ['file.late', null, 'no progress'],
      ],
    );
    assert.notEqual(bodies[0]!.id, bodies[1]!.id);
  });

  it('hands out each receiver’s events oldest first until delivered; a failure is counted and kept', async () => {
    const j = await open();
    j.handle.outbox.setTargets(['r1', 'r2']);
    for (const reason of ['a', 'b', 'c'])
      await j.handle.outbox.recordEventNow('file.late', null, reason);
    const first = await j.handle.outbox.undelivered('r1', 2);
    assert.deepEqual(
      first.map((e) => [bodyOf(e).reason, e.attempts]),
      [
        ['a', 0],
        ['b', 0],
      ],
    );
    await j.handle.outbox.noteDeliveryFailed(first[0]!.id, 'HTTP 500');
    await j.handle.outbox.noteDeliveryFailed(first[0]!.id, 'HTTP 502');
    const failed = await j.get<{ attempts: number; last_error: string; delivered_at: null }>(
      'SELECT attempts, last_error, delivered_at FROM webhook_outbox WHERE id = ?',
      first[0]!.id,
    );
    assert.deepEqual(failed, { attempts: 2, last_error: 'HTTP 502', delivered_at: null });
    await j.handle.outbox.markDelivered([first[0]!.id, first[1]!.id]);
    const delivered = await j.get<{ attempts: number; last_error: null }>(
      'SELECT attempts, last_error FROM webhook_outbox WHERE id = ?',
      first[0]!.id,
    );
    assert.deepEqual(delivered, { attempts: 3, last_error: null }, 'the delivery counts too');
    assert.deepEqual(
      (await waiting(j, 'r1')).map((e) => bodyOf(e).reason),
      ['c'],
    );
    assert.equal((await waiting(j, 'r2')).length, 3, 'another receiver’s events wait on');
    const perReceiver = await j.all(
      'SELECT target, count(*) AS waiting FROM webhook_outbox WHERE delivered_at IS NULL GROUP BY target ORDER BY target',
    );
    assert.deepEqual(perReceiver, [
      { target: 'r1', waiting: 1 },
      { target: 'r2', waiting: 3 },
    ]);
  });

  it('keeps a failed delivery’s error to its first 500 characters', async () => {
    const j = await open();
    j.handle.outbox.setTargets(['r1']);
    await j.handle.outbox.recordEventNow('file.late', null, 'x');
    const [event] = await waiting(j, 'r1');
    await j.handle.outbox.noteDeliveryFailed(event!.id, 'e'.repeat(600));
    const kept = await j.get<{ last_error: string }>(
      'SELECT last_error FROM webhook_outbox WHERE id = ?',
      event!.id,
    );
    assert.equal(kept?.last_error, 'e'.repeat(500));
  });
});
