// The FileStore port on each journal: a file's record made (its generation counting up for the
// same bytes), moved through its statuses, refused, and read again from its first row; and what
// resume, recount and the daemon's checks read of it (counts, requests, what is left, progress,
// files it waits for, files it may have grown from).
import assert from 'node:assert/strict';
import { it } from 'node:test';
import type { NewFile } from '../../src/ports/records.js';
import { onEachJournal, type Subject } from './journals.js';
import { seedAnsweredAttempt, seedBatch, seedFile, seedRow, type Seeded } from './seed.js';

let made = 0;
const newFile = (sha256 = `bytes-${process.pid}-${++made}`, size = 100): NewFile => ({
  sha256,
  name: `list${++made}.csv`,
  path: `/inbox/list${made}.csv`,
  size,
  encoding: 'utf-8',
  provider: 'sim:acct',
});

const LATER = '2026-12-02T09:00:00.000Z';

/** A file read halfway: a batch sent (an attempt), one only planned, one invalid row. */
async function halfRead(j: Subject, status = 'intake'): Promise<Seeded & { sent: number }> {
  const at = await seedFile(j, status);
  const sent = await seedBatch(j, at, 'accepted', ['13800000001', '13800000002'], 2);
  await seedAnsweredAttempt(j, sent, 'accepted', LATER, LATER, '000000');
  await seedBatch(j, at, 'planned', ['13800000003'], 4);
  await seedRow(j, at, 5, { intake: 'invalid', error: 'not a phone number' });
  return { ...at, sent };
}

onEachJournal('the FileStore', ({ open }) => {
  it('counts the generation up for the same bytes; identify finds the latest', async () => {
    const j = await open();
    const bytes = newFile();
    const first = await j.handle.files.create(bytes);
    const second = await j.handle.files.create({ ...bytes, name: 'again.csv' });
    const other = await j.handle.files.create(newFile());
    assert.deepEqual([first.generation, second.generation, other.generation], [1, 2, 1]);
    assert.equal((await j.handle.files.identify(bytes.sha256))?.id, second.id);
    assert.equal(await j.handle.files.identify('no such bytes'), undefined);
    assert.deepEqual(
      [first.status, first.name, first.path, first.size, first.provider, first.finished_at],
      ['intake', bytes.name, bytes.path, 100, 'sim:acct', null],
    );
    assert.equal(first.started_at, first.created_at);
    assert.deepEqual(await j.handle.files.file(first.id), first);
  });

  it('moves a file intake -> sending -> done, stamping its end; refused keeps the reason', async () => {
    const j = await open();
    const { id } = await j.handle.files.create(newFile());
    await j.handle.files.status(id, 'sending');
    let file = await j.handle.files.file(id);
    assert.deepEqual([file?.status, file?.finished_at, file?.error], ['sending', null, null]);
    await j.handle.files.status(id, 'done');
    file = await j.handle.files.file(id);
    assert.equal(file?.status, 'done');
    assert.ok(file?.finished_at, 'done: its end stamped');
    await j.handle.files.status(id, 'refused', 'the file changed while it was read');
    file = await j.handle.files.file(id);
    assert.deepEqual(
      [file?.status, file?.error],
      ['refused', 'the file changed while it was read'],
    );
    assert.ok(file?.finished_at);
  });

  it('refuses a file with nothing sent by dropping its rows', async () => {
    const j = await open();
    const at = await seedFile(j, 'intake');
    await seedBatch(j, at, 'planned', ['13800000001']);
    await seedRow(j, at, 3, { intake: 'invalid', error: 'bad' });
    const refused = await j.handle.files.refuse(at.fileId, (sent) => `no header (${sent} sent)`);
    assert.deepEqual(refused, { requestsSent: 0, reason: 'no header (0 sent)' });
    const file = await j.handle.files.file(at.fileId);
    assert.deepEqual([file?.status, file?.error], ['refused', 'no header (0 sent)']);
    assert.deepEqual(await j.get('SELECT count(*) AS n FROM rows WHERE file_id = ?', at.fileId), {
      n: 0,
    });
    const counts = await j.handle.files.counts(at.fileId);
    assert.deepEqual([counts.rows, counts.invalid, counts.pending], [0, 0, 0]);
  });

  it('refuses a file that sent something by keeping its rows, recounted', async () => {
    const j = await open();
    const at = await halfRead(j);
    const refused = await j.handle.files.refuse(at.fileId, (sent) => `cut short (${sent} sent)`);
    assert.deepEqual(refused, { requestsSent: 1, reason: 'cut short (1 sent)' });
    assert.deepEqual(await j.handle.files.counts(at.fileId), {
      rows: 4,
      invalid: 1,
      duplicates: 0,
      repeats: 0,
      accepted: 2,
      failed: 0,
      unknown: 0,
      cancelled: 0,
      pending: 1,
      requests: 1,
    });
  });

  it('reads a file again keeping only the batches a request carried, their rows in line order', async () => {
    const j = await open();
    const at = await halfRead(j, 'refused');
    const kept = await j.handle.files.beginIntake(at.fileId);
    assert.deepEqual([...kept.lines], [2, 3]);
    const rows = await j.all<{ id: number }>(
      'SELECT id FROM rows WHERE file_id = ? ORDER BY line',
      at.fileId,
    );
    assert.deepEqual(
      [...kept.ids],
      rows.map((r) => r.id),
    );
    const batches = await j.all('SELECT id FROM batches WHERE file_id = ?', at.fileId);
    assert.deepEqual(batches, [{ id: at.sent }]);
    const file = await j.handle.files.file(at.fileId);
    assert.deepEqual([file?.status, file?.error, file?.finished_at], ['intake', null, null]);
    assert.equal(await j.handle.files.requestsMade(at.fileId), 1);
  });

  it('says what is left to send, the requests made, and when the file last got somewhere', async () => {
    const j = await open();
    const at = await halfRead(j, 'sending');
    await seedBatch(j, at, 'sending', ['13800000006', '13800000007'], 6);
    assert.deepEqual(await j.handle.files.planSummary(at.fileId), {
      groups: 1,
      requests: 2,
      numbers: 3,
    });
    assert.deepEqual(await j.handle.files.lateness(at.fileId), {
      lastProgressAt: LATER,
      requestsMade: 1,
    });
    const sha256 = (await j.handle.files.file(at.fileId))!.sha256;
    await j.handle.files.noteTaken(sha256);
    const taken = (await j.handle.files.file(at.fileId))!.taken_at;
    assert.ok(taken && taken > LATER, 'taken again: noted');
    assert.equal((await j.handle.files.lateness(at.fileId)).lastProgressAt, taken);
  });

  it('finds the unfinished files that sent something and are shorter, longest first', async () => {
    const j = await open();
    const short = await halfRead(j, 'refused');
    const long = await halfRead(j, 'sending');
    const done = await halfRead(j, 'done');
    const unsent = await seedFile(j, 'sending');
    await j.run('UPDATE files SET size = ? WHERE id = ?', 50, short.fileId);
    await j.run(
      'UPDATE files SET size = ? WHERE id IN (?, ?, ?)',
      80,
      long.fileId,
      done.fileId,
      unsent.fileId,
    );
    const found = await j.handle.files.grownCandidates(100);
    assert.deepEqual(
      found.map((f) => f.id),
      [long.fileId, short.fileId],
    );
    assert.deepEqual(
      (await j.handle.files.grownCandidates(80)).map((f) => f.id),
      [short.fileId],
    );
  });

  it('names the unfinished files whose unsent rows its repeats wait for', async () => {
    const j = await open();
    const earlier = await seedFile(j, 'sending');
    await seedBatch(j, earlier, 'planned', ['13800000008'], 2);
    const row = await j.get<{ id: number }>(
      'SELECT id FROM rows WHERE file_id = ?',
      earlier.fileId,
    );
    const later = await seedFile(j, 'sending');
    await seedRow(j, later, 2, { intake: 'duplicate', duplicateOf: row!.id });
    const name = (await j.handle.files.file(earlier.fileId))!.name;
    assert.deepEqual(await j.handle.files.waitingRepeats(later.fileId), [
      { id: earlier.fileId, name, status: 'sending', rows: 1 },
    ]);
    assert.deepEqual(await j.handle.files.waitingRepeats(earlier.fileId), []);
  });
});
