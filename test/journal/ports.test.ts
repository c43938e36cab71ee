// The journal through its ports (src/journal/index.ts) on a real data directory: a writer makes a
// file, plans rows through the planner's store, reads them back, claims, starts and records an
// attempt; a reader never upgrades a journal another process holds.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, describe, it } from 'node:test';
import { errorCode } from '../../src/errors.js';
import type { JournalHandle } from '../../src/ports/index.js';
import { journalPath, openReader, openScratch, openWriter } from '../../src/journal/index.js';
import Database from '../../src/journal/sqlite.js';
import type { RecipientRow } from '../../src/ports/index.js';

const dirs: string[] = [];
after(() => dirs.forEach((dir) => rmSync(dir, { recursive: true, force: true })));

function dataDir(): string {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'smsdrop-ports-'));
  dirs.push(dir);
  return dir;
}

function writer(dir: string): JournalHandle {
  return openWriter(dir, {
    role: 'ports test',
    synchronous: 'normal',
    reqIdOn: true,
    onLost: () => assert.fail('journal lost'),
  }).handle;
}

/** One group of `phones` in one batch, released, as intake writes it (through PlanStore). */
async function planRows(journal: JournalHandle, fileId: number, phones: string[]): Promise<number> {
  const store = journal.files.planStore(fileId);
  let batchId = 0;
  await store.writeInBulk(phones.length, () => {
    const now = new Date().toISOString();
    const groupId = store.insertGroup({
      appId: 'app',
      templateId: '1',
      datasJson: '["a"]',
      keyHash: 7,
    });
    batchId = store.insertBatch(groupId, now);
    phones.forEach((phone, i) => {
      store.addRow([i + 2, phone, phone, groupId, 'valid', null, null, batchId, null]);
    });
    store.flushRows();
    store.saveBatchNumbers(batchId, phones);
    store.releaseBatch(batchId);
    store.finishIntakeCounts({ rows: phones.length, invalid: 0, duplicates: 0, repeats: 0 });
  });
  await store.commit();
  return batchId;
}

async function allPages<T>(pages: Iterable<readonly T[]> | AsyncIterable<readonly T[]>) {
  const rows: T[] = [];
  for await (const page of pages) rows.push(...page);
  return rows;
}

describe('journal ports (SQLite)', () => {
  it('plans, reads, claims, starts and records through the ports', async () => {
    const dir = dataDir();
    const journal = writer(dir);
    after(() => journal.close());
    const file = await journal.files.create({
      sha256: 'ab'.repeat(32),
      name: 'list.csv',
      path: path.join(dir, 'list.csv'),
      size: 10,
      encoding: 'utf-8',
    });
    assert.equal((await journal.files.identify('ab'.repeat(32)))?.id, file.id);
    await journal.files.beginIntake(file.id);
    const batchId = await planRows(journal, file.id, ['13800000001', '13800000002']);
    await journal.files.status(file.id, 'sending');

    const rows: RecipientRow[] = await allPages(journal.reads.recipients(file.id, []));
    assert.deepEqual(
      rows.map((r) => [r.line, r.phone_raw, r.status]),
      [
        [2, '13800000001', 'pending'],
        [3, '13800000002', 'pending'],
      ],
    );
    assert.deepEqual(await journal.files.planSummary(file.id), {
      groups: 1,
      requests: 1,
      numbers: 2,
    });

    const claim = await journal.send.claimDueBatches({
      fileId: file.id,
      now: Date.now(),
      afterId: 0,
      limit: 10,
      skip: new Set(),
    });
    assert.deepEqual(claim.first, []);
    assert.deepEqual(
      claim.due.map((b) => [b.batch.id, b.phones]),
      [[batchId, '13800000001,13800000002']],
    );
    const skipped = await journal.send.claimDueBatches({
      fileId: file.id,
      now: Date.now(),
      afterId: 0,
      limit: 10,
      skip: new Set([batchId]),
    });
    assert.deepEqual(skipped.due, []);

    const batch = claim.due[0]!.batch;
    const [attemptId] = await journal.send.startAttempts([{ batch, reqId: batch.req_id }]);
    assert.ok(attemptId !== undefined);
    // The same batch again: it is no longer planned, so this claim does not count.
    assert.deepEqual(await journal.send.startAttempts([{ batch, reqId: batch.req_id }]), [
      undefined,
    ]);
    assert.deepEqual((await journal.reads.inFlight(file.id)).requests, 1);
    await journal.send.recordOutcomes([
      {
        batchId,
        transition: {
          to: 'accepted',
          statusCode: '000000',
          smsMessageSid: 'sid',
          dateCreated: null,
        },
        attempt: {
          id: attemptId,
          result: { outcome: 'accepted', statusCode: '000000', reason: '' },
        },
      },
    ]);
    assert.equal(journal.send.writesPending(), false);
    const counts = await journal.files.counts(file.id);
    assert.deepEqual([counts.rows, counts.accepted, counts.pending, counts.requests], [2, 2, 0, 1]);
    assert.equal(await journal.files.requestsMade(file.id), 1);
    assert.equal(await journal.send.nextDueAt(file.id), null);
    assert.equal((await journal.send.recentStarts(Date.now() - 60_000))[0]?.numbers, 2);
    await journal.files.status(file.id, 'done');
    assert.equal((await journal.reads.file(file.id))?.status, 'done');
  });

  it('openReader refuses to upgrade a journal another process holds (E_JOURNAL_NEEDS_UPGRADE)', async () => {
    const dir = dataDir();
    await writer(dir).close();
    // A journal an older version wrote: its latest migration is missing.
    const raw = new Database(journalPath(dir));
    const latest = raw
      .prepare('SELECT max(version) FROM schema_migrations')
      .pluck()
      .get() as number;
    raw.prepare('DELETE FROM schema_migrations WHERE version = ?').run(latest);
    raw.close();
    // Another live process holds the data directory (a daemon): its pid is in the lock.
    const holder = spawn(process.execPath, ['-e', 'setInterval(() => {}, 60_000)'], {
      stdio: 'ignore',
    });
    after(() => holder.kill());
    writeFileSync(
      path.join(dir, 'smsdrop.lock'),
      JSON.stringify({ pid: holder.pid, what: 'smsdrop run', since: new Date().toISOString() }),
    );
    assert.throws(
      () => openReader(dir),
      (err: unknown) => errorCode(err) === 'E_JOURNAL_NEEDS_UPGRADE',
    );
    holder.kill();
    const check = new Database(journalPath(dir), { readonly: true });
    const still = check.prepare('SELECT count(*) FROM schema_migrations WHERE version = ?').pluck();
    assert.equal(still.get(latest), 0, 'the held journal was left as it was');
    check.close();
  });

  it('openScratch plans in a journal of its own that leaves out the suppressed numbers', async () => {
    const dir = dataDir();
    const journal = writer(dir);
    await journal.suppression.add(['13800000009'], 'asked not to', 'list');
    await journal.close();
    const reader = openReader(dir)!;
    const scratch = await openScratch(path.join(dataDir(), 'plan.sqlite'), reader);
    reader.close();
    after(() => scratch.close());
    assert.deepEqual(
      (await scratch.suppression.list()).map((n) => [n.phone, n.reason, n.source]),
      [['13800000009', 'asked not to', 'list']],
    );
    const file = await scratch.files.create({
      sha256: 'ef'.repeat(32),
      name: 'dry.csv',
      path: '/dry.csv',
      size: 1,
      encoding: 'utf-8',
    });
    assert.match(
      scratch.files.planStore(file.id).whySuppressed('13800000009') ?? '',
      /asked not to/,
    );
  });

  it('openReader of a data directory with no journal is undefined', () => {
    assert.equal(openReader(dataDir()), undefined);
  });
});
