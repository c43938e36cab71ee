// The webhook outbox: an event is written by the journal write it reports, in its transaction
// (rolled back together), only while receivers are set, once per receiver, with the same id.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, it } from 'node:test';
import { setDaemonState } from '../../src/journal/daemonState.js';
import { createFile, setFileStatus } from '../../src/journal/files.js';
import { journalPath } from '../../src/journal/paths.js';
import { openJournal } from '../../src/journal/open.js';
import type { EventBody, OutboxRow } from '../../src/ports/events.js';
import { markDelivered, outboxBacklog, undeliveredEvents } from '../../src/journal/outbox.js';
import { FILE_STATUS } from '../../src/ports/states.js';
import { sqliteOf } from './sqliteOf.js';
import { handleOf } from '../../src/journal/handle.js';

function journal() {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'smsdrop-outbox-'));
  return { db: openJournal(journalPath(dir)), dir };
}
const FILE = {
  sha256: 'a'.repeat(64),
  name: 'x.csv',
  path: '/tmp/x.csv',
  size: 10,
  encoding: 'utf-8',
};

/** An outbox row's body: the event as recordEvent wrote it. */
const bodyOf = (row: OutboxRow) => JSON.parse(row.body) as EventBody;

describe('the webhook outbox', () => {
  it('writes nothing while no receiver is set', () => {
    const { db, dir } = journal();
    const file = createFile(db, FILE);
    setFileStatus(db, file.id, FILE_STATUS.done);
    assert.deepEqual(outboxBacklog(db), []);
    db.close();
    fs.rmSync(dir, { recursive: true });
  });

  it('writes each event once per receiver, in the transaction of what it reports', () => {
    const { db, dir } = journal();
    handleOf(db).outbox.setTargets(['r1', 'r2']);
    const file = createFile(db, FILE);
    // Rolled back with the status it reports.
    assert.throws(() =>
      sqliteOf(db).transaction(() => {
        setFileStatus(db, file.id, FILE_STATUS.done);
        throw new Error('crash');
      })(),
    );
    assert.deepEqual(
      undeliveredEvents(db, 'r1', 10).map((e) => e.event),
      ['file.taken'],
    );
    setFileStatus(db, file.id, FILE_STATUS.done);
    setDaemonState(db, { paused: '111142: balance' });
    setDaemonState(db, { paused: '111142: balance' }); // no change: no event
    setDaemonState(db, { paused: null });
    const r1 = undeliveredEvents(db, 'r1', 10);
    const r2 = undeliveredEvents(db, 'r2', 10);
    assert.deepEqual(
      r1.map((e) => e.event),
      ['file.taken', 'file.finished', 'sending.paused', 'sending.resumed'],
    );
    assert.deepEqual(
      r1.map((e) => bodyOf(e).id),
      r2.map((e) => bodyOf(e).id),
      'one id per event, whatever the receiver',
    );
    const finished = bodyOf(r1[1]!);
    assert.deepEqual(
      [finished.file?.name, finished.file?.status, finished.file?.counts?.rows],
      ['x.csv', 'done', 0],
    );
    assert.equal(bodyOf(r1[2]!).reason, '111142: balance');
    markDelivered(db, r1[0]!.id);
    assert.equal(undeliveredEvents(db, 'r1', 10).length, 3);
    assert.deepEqual(
      outboxBacklog(db).map((b) => [b.target, b.waiting]),
      [
        ['r1', 3],
        ['r2', 4],
      ],
    );
    db.close();
    fs.rmSync(dir, { recursive: true });
  });
});
