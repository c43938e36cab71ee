// Requests that start while an intake's transaction is open are made safe by an intent each in a
// side file, not by a journal commit: the intent is on disk before the request may leave, a crash
// that takes the attempt back out of the journal gets it put back (as "may have been received"),
// and a batch is never sent before a journal commit holds it.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, describe, it, mock } from 'node:test';
import Database from '../../src/journal/sqlite.js';
import { applyTransition, recoverInterrupted, startAttempt } from '../../src/journal/sendMoves.js';
import type { BatchRecord } from '../../src/ports/records.js';
import { getBatch } from '../../src/journal/batchNumbers.js';
import { bulkWrite, commitBulk } from '../../src/journal/bulk.js';
import { createFile } from '../../src/journal/files.js';
import {
  closeIntents,
  enableIntents,
  JournalLostError,
  replayIntents,
} from '../../src/journal/intents.js';
import { intentsPath } from '../../src/journal/paths.js';
import type { Journal } from '../../src/journal/connection.js';
import { openJournal } from '../../src/journal/open.js';
import { openControl } from '../../src/journal/smallStores.js';
import { plannedRow as row, planWriter } from './planWriter.js';
import { MAX_DEFERRED_MS, writeQueueFor } from '../../src/journal/writeQueue.js';
import { sqliteOf } from './sqliteOf.js';
import { attemptHistory } from '../../src/journal/sendReads.js';
import { BATCH_REQ_ID } from '../../src/journalRules/attempts.js';

const dirs: string[] = [];
after(() => dirs.forEach((dir) => rmSync(dir, { recursive: true, force: true })));

/** A journal with intents on, and one file whose one batch of two numbers is committed and due. */
function journalWithDueBatch(onLost?: () => void): {
  file: string;
  db: Journal;
  fileId: number;
  batch: BatchRecord;
} {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'smsdrop-intents-'));
  dirs.push(dir);
  const file = path.join(dir, 'journal.sqlite');
  const db = openJournal(file);
  enableIntents(db, 'normal', onLost);
  const f = createFile(db, {
    sha256: 'sent',
    name: 'sent.csv',
    path: '/sent.csv',
    size: 1,
    encoding: 'utf-8',
  });
  const writer = planWriter(db, f.id, { maxPerRequest: 200 });
  writer.write([row(2, '13800000001'), row(3, '13800000002')]);
  writer.finish();
  const batchId = sqliteOf(db)
    .prepare('SELECT id FROM batches WHERE file_id = ?')
    .pluck()
    .get(f.id) as number;
  return { file, db, fileId: f.id, batch: getBatch(db, batchId) };
}

/**
 * Another file's intake holding the journal's bulk transaction open, as while a big file is read.
 */
function intakeInProgress(db: Journal): void {
  const other = createFile(db, {
    sha256: 'reading',
    name: 'reading.csv',
    path: '/reading.csv',
    size: 1,
    encoding: 'utf-8',
  });
  planWriter(db, other.id, { maxPerRequest: 200 }).write([row(2, '13900000001')]);
  assert.equal(sqliteOf(db).inTransaction, true);
}

function read<T>(file: string, query: string): T[] {
  const reader = new Database(file, { readonly: true });
  try {
    return reader.prepare(query).all() as T[];
  } finally {
    reader.close();
  }
}

/**
 * The process dies: the journal's open transaction is rolled back, the side file stays as written.
 */
function crash(db: Journal): void {
  closeIntents(db);
  db.close();
}

describe('intents', () => {
  it('an attempt started during an intake is on disk through its intent before its request may leave, not through a journal commit', async () => {
    const { file, db, batch } = journalWithDueBatch();
    intakeInProgress(db);
    const attemptId = await writeQueueFor(db).run(() => startAttempt(db, batch, batch.req_id));
    assert.ok(attemptId);
    assert.equal(sqliteOf(db).inTransaction, true, 'the intake transaction stays open');
    assert.deepEqual(read(file, 'SELECT * FROM attempts'), [], 'the journal did not commit');
    const intents = read<{ batch_id: number; batch_req_id: string; req_id: string }>(
      intentsPath(file),
      'SELECT batch_id, batch_req_id, req_id FROM intents',
    );
    assert.deepEqual(intents, [
      { batch_id: batch.id, batch_req_id: batch.req_id, req_id: batch.req_id },
    ]);
    db.close();
  });

  it('after a crash, the attempt the journal lost is put back as cut off mid-request, and retried with the same reqId', async () => {
    const { file, db, fileId, batch } = journalWithDueBatch();
    intakeInProgress(db);
    await writeQueueFor(db).run(() => startAttempt(db, batch, batch.req_id));
    crash(db);

    const reopened = openJournal(file);
    assert.equal(
      getBatch(reopened, batch.id).state,
      'planned',
      'the journal alone does not know the request left',
    );
    assert.deepEqual(replayIntents(reopened), { replayed: 1, missing: 0 });
    assert.equal(getBatch(reopened, batch.id).state, 'sending');
    assert.deepEqual(
      sqliteOf(reopened)
        .prepare('SELECT req_id, finished_at FROM attempts WHERE batch_id = ?')
        .all(batch.id),
      [{ req_id: BATCH_REQ_ID, finished_at: null }],
    );
    assert.equal(attemptHistory(reopened, batch.id, batch.req_id).everyAttemptCarriedReqId, true);
    assert.deepEqual(
      read(intentsPath(file), 'SELECT * FROM intents'),
      [],
      'the side file is emptied',
    );
    assert.deepEqual(
      replayIntents(reopened),
      { replayed: 0, missing: 0 },
      'a second replay changes nothing',
    );

    recoverInterrupted(reopened, fileId, true);
    const recovered = getBatch(reopened, batch.id);
    assert.equal(recovered.state, 'planned');
    assert.equal(recovered.maybe_sent, 1);
    assert.equal(
      recovered.req_id,
      batch.req_id,
      'the same reqId: the provider refuses to send it twice that day',
    );
    reopened.close();
  });

  it('an attempt a journal commit already holds is not replayed', async () => {
    const { file, db, batch } = journalWithDueBatch();
    intakeInProgress(db);
    await writeQueueFor(db).run(() => startAttempt(db, batch, batch.req_id));
    commitBulk(db);
    crash(db);
    const reopened = openJournal(file);
    assert.deepEqual(replayIntents(reopened), { replayed: 0, missing: 0 });
    assert.equal(sqliteOf(reopened).prepare('SELECT count(*) FROM attempts').pluck().get(), 1);
    reopened.close();
  });

  it('a turn that splits a batch commits the journal: its halves are never sent before a commit holds them', async () => {
    const { file, db, batch } = journalWithDueBatch();
    await writeQueueFor(db).run(() => startAttempt(db, batch, batch.req_id));
    intakeInProgress(db);
    await writeQueueFor(db).run(() =>
      applyTransition(db, batch.id, { to: 'split', statusCode: '160042', statusMsg: 'bad number' }),
    );
    assert.equal(sqliteOf(db).inTransaction, false);
    assert.deepEqual(
      read(file, `SELECT numbers, state FROM batches WHERE parent_id = ${batch.id}`),
      [
        { numbers: 1, state: 'planned' },
        { numbers: 1, state: 'planned' },
      ],
    );
    db.close();
  });

  it(`an intake transaction open for ${MAX_DEFERRED_MS} ms is committed by the next turn of requests`, async () => {
    const { file, db, batch } = journalWithDueBatch();
    mock.timers.enable({ apis: ['Date'], now: Date.now() });
    try {
      intakeInProgress(db);
      mock.timers.tick(MAX_DEFERRED_MS);
      await writeQueueFor(db).run(() => startAttempt(db, batch, batch.req_id));
    } finally {
      mock.timers.reset();
    }
    assert.equal(sqliteOf(db).inTransaction, false);
    assert.equal(read(file, 'SELECT * FROM attempts').length, 1);
    db.close();
  });

  it('intake releases a batch only once a journal commit holds it', () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'smsdrop-intents-'));
    dirs.push(dir);
    const db = openJournal(path.join(dir, 'journal.sqlite'));
    enableIntents(db);
    const f = createFile(db, {
      sha256: 'r',
      name: 'r.csv',
      path: '/r.csv',
      size: 1,
      encoding: 'utf-8',
    });
    const writer = planWriter(db, f.id, { maxPerRequest: 2 });
    const due = () =>
      sqliteOf(db)
        .prepare('SELECT next_attempt_at = 0 FROM batches WHERE file_id = ? ORDER BY id')
        .pluck()
        .all(f.id);
    writer.write([row(2, '13800000001'), row(3, '13800000002')]);
    writer.write([row(4, '13800000003')]);
    assert.deepEqual(
      due(),
      [0, 0],
      'full, and followed by more of the file, but not committed yet',
    );
    commitBulk(db);
    writer.write([row(5, '13800000004')]);
    assert.deepEqual(due(), [1, 0]);
    writer.finish();
    assert.deepEqual(due(), [1, 1]);
    db.close();
  });

  it('a rolled-back transaction (a full disk) keeps every intent, stops every later write, and the lost attempts are put back', async () => {
    let told = 0;
    const { file, db, batch } = journalWithDueBatch(() => told++);
    intakeInProgress(db);
    await writeQueueFor(db).run(() => startAttempt(db, batch, batch.req_id));
    const doomed = writeQueueFor(db).run(() => {
      sqliteOf(db).exec('ROLLBACK'); // what SQLite does by itself on SQLITE_FULL or an I/O error
      throw new Error('database or disk is full');
    });
    await assert.rejects(doomed, /disk is full/);
    assert.equal(told, 1, 'the runtime is told, and stops');
    // Another file's writes that would commit the journal must not count the lost attempt as
    // covered.
    await assert.rejects(
      writeQueueFor(db).run(() => 1),
      JournalLostError,
    );
    intakeInProgress(db);
    await assert.rejects(
      writeQueueFor(db).run(() => 1),
      JournalLostError,
    );
    commitBulk(db);
    assert.equal(
      read(intentsPath(file), 'SELECT * FROM intents').length,
      1,
      'the intent of the lost attempt stays',
    );
    assert.deepEqual(replayIntents(db), { replayed: 1, missing: 0 });
    assert.equal(getBatch(db, batch.id).state, 'sending');
    crash(db);
  });

  it('a turn whose writes failed leaves no intent: its attempts never happened', async () => {
    const { file, db, batch } = journalWithDueBatch();
    intakeInProgress(db);
    const failed = writeQueueFor(db).run(() => {
      startAttempt(db, batch, batch.req_id);
      throw new Error('a later write of the turn failed');
    });
    await assert.rejects(failed, /later write/);
    assert.equal(getBatch(db, batch.id).state, 'planned', 'rolled back to its savepoint');
    await writeQueueFor(db).run(() => 1); // a later turn writes the intents it noted, if any
    assert.deepEqual(read(intentsPath(file), 'SELECT * FROM intents'), []);
    crash(db);
  });

  it('a journal that never deferred a request has nothing to replay', () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'smsdrop-intents-'));
    dirs.push(dir);
    const db = openJournal(path.join(dir, 'journal.sqlite'));
    assert.deepEqual(replayIntents(db), { replayed: 0, missing: 0 });
    bulkWrite(db, 0, () => {});
    assert.throws(() => replayIntents(db), /commit the journal first/);
    commitBulk(db);
    db.close();
  });

  it("an operator's cancel after the daemon died puts its lost attempt back first: the batch is not cancelled", async () => {
    const { file, db, fileId, batch } = journalWithDueBatch();
    intakeInProgress(db);
    await writeQueueFor(db).run(() => startAttempt(db, batch, batch.req_id));
    crash(db); // the request left; the journal lost its attempt; no daemon has started since
    const control = openControl(path.dirname(file), {
      synchronous: 'normal',
      webhookTargets: [],
    });
    try {
      const done = await control.command(fileId, { action: 'cancel', by: 'cli' });
      assert.equal(done.cancelled, 0, 'no number of a batch whose request may have left');
    } finally {
      control.close();
    }
    const [kept] = read<{ state: string; attempts: number }>(
      file,
      `SELECT state, attempts FROM batches WHERE id = ${batch.id}`,
    );
    assert.deepEqual(kept, { state: 'sending', attempts: 1 }, 'as the next start would find it');
    assert.equal(read(file, `SELECT * FROM attempts WHERE batch_id = ${batch.id}`).length, 1);
    const reopened = openJournal(file);
    assert.deepEqual(replayIntents(reopened), { replayed: 0, missing: 0 }, 'put back once');
    reopened.close();
  });
});
