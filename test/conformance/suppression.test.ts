// The SuppressionList port on each journal: numbers added and removed with how many each call
// changed, a number listed twice keeping its first reason, and the list read oldest first (then by
// number, in byte order), as the reads' copy of it (ReadStore.suppressedNumbers) is.
import assert from 'node:assert/strict';
import { it } from 'node:test';
import { onEachJournal, type Subject } from './journals.js';

const listed = async (j: Subject) =>
  (await j.handle.suppression.list()).map((s) => [s.phone, s.reason, s.source]);

/** A number listed at `addedAt` (the port stamps its own time: a test needs an order it knows). */
async function seedSuppressed(j: Subject, phone: string, addedAt: string): Promise<void> {
  await j.run(
    "INSERT INTO suppressed (phone, reason, source, added_at) VALUES (?, 'seeded', 'list', ?)",
    phone,
    addedAt,
  );
}

onEachJournal('the SuppressionList', ({ open }) => {
  it('adds numbers and says how many were new; one listed twice in a call counts once', async () => {
    const j = await open();
    const added = await j.handle.suppression.add(
      ['13800000001', '13800000002', '13800000001'],
      'asked us to stop',
      'list',
    );
    assert.equal(added, 2);
    assert.deepEqual(await listed(j), [
      ['13800000001', 'asked us to stop', 'list'],
      ['13800000002', 'asked us to stop', 'list'],
    ]);
  });

  it('keeps a number’s first reason and source when it is added again', async () => {
    const j = await open();
    await j.handle.suppression.add(['13800000003'], '160034: blacklisted', 'provider');
    const again = await j.handle.suppression.add(
      ['13800000003', '13800000004'],
      'opted out',
      'list',
    );
    assert.equal(again, 1, 'only the new number counts');
    assert.deepEqual(await listed(j), [
      ['13800000003', '160034: blacklisted', 'provider'],
      ['13800000004', 'opted out', 'list'],
    ]);
  });

  it('removes numbers and says how many were on the list', async () => {
    const j = await open();
    await j.handle.suppression.add(['13800000005', '13800000006'], 'opted out', 'list');
    assert.equal(await j.handle.suppression.remove(['13800000005', '13800000099']), 1);
    assert.equal(await j.handle.suppression.remove(['13800000005']), 0, 'already gone');
    assert.deepEqual(
      (await j.handle.suppression.list()).map((s) => s.phone),
      ['13800000006'],
    );
    assert.equal(await j.handle.suppression.remove([]), 0);
  });

  it('lists the oldest first, then by number in byte order; the reads give the same list', async () => {
    const j = await open();
    await seedSuppressed(j, '13800000009', '2026-11-02T00:00:00.000Z');
    await seedSuppressed(j, '+8613800000010', '2026-11-01T00:00:00.000Z');
    await seedSuppressed(j, '13800000007', '2026-11-01T00:00:00.000Z');
    await seedSuppressed(j, 'B13800000008', '2026-11-01T00:00:00.000Z');
    await seedSuppressed(j, 'a13800000008', '2026-11-01T00:00:00.000Z');
    const list = await j.handle.suppression.list();
    assert.deepEqual(
      list.map((s) => s.phone),
      ['+8613800000010', '13800000007', 'B13800000008', 'a13800000008', '13800000009'],
    );
    assert.equal(list[0]!.addedAt, '2026-11-01T00:00:00.000Z');
    assert.deepEqual(await j.handle.reads.suppressedNumbers(), list);
  });

  it('stamps each number with when it was added', async () => {
    const j = await open();
    const before = new Date().toISOString();
    await j.handle.suppression.add(['13800000011'], 'opted out', 'list');
    const [entry] = await j.handle.suppression.list();
    assert.ok(entry, 'listed');
    assert.ok(entry.addedAt >= before && entry.addedAt <= new Date().toISOString());
  });
});
