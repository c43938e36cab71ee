// SendStore on a real journal: what claimDueBatches hands out (the batches intake asked to go
// first, once each, ahead of the page; none the caller has queued), and that startAttempts is the
// claim that counts.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, describe, it } from 'node:test';
import type { JournalHandle } from '../../src/ports/index.js';
import { openWriter } from '../../src/journals/index.js';

const dir = mkdtempSync(path.join(os.tmpdir(), 'smsdrop-sendstore-'));
after(() => rmSync(dir, { recursive: true, force: true }));

/**
 * A file of three released batches of two numbers each (no rows: a batch of one number would keep
 * it in its row only); the last one asked to go first.
 */
async function fileOfThree(journal: JournalHandle): Promise<{ fileId: number; ids: number[] }> {
  const file = await journal.files.create({
    sha256: 'cd'.repeat(32),
    name: 'three.csv',
    path: path.join(dir, 'three.csv'),
    size: 3,
    encoding: 'utf-8',
  });
  const store = journal.files.planStore(file.id);
  const ids: number[] = [];
  await store.writeInBulk(3, () => {
    const now = new Date().toISOString();
    for (let i = 0; i < 3; i++) {
      const key = { appId: 'app', templateId: '1', datasJson: `["${i}"]`, keyHash: i };
      const batchId = store.insertBatch(store.insertGroup(key), now);
      store.saveBatchNumbers(batchId, [`1380000000${i}`, `1390000000${i}`]);
      store.releaseBatch(batchId);
      ids.push(batchId);
    }
  });
  await store.commit();
  store.sendFirst([ids[2]!]);
  await journal.files.status(file.id, 'sending');
  return { fileId: file.id, ids };
}

describe('SendStore (SQLite)', () => {
  it('hands out the batches to send first once, ahead of the page, and never a queued one', async () => {
    const { handle: journal } = await openWriter(
      { dataDir: dir },
      {
        role: 'sendStore test',
        synchronous: 'normal',
        reqIdOn: false,
        onLost: () => assert.fail('journal lost'),
      },
    );
    after(() => journal.close());
    const { fileId, ids } = await fileOfThree(journal);
    const query = { fileId, now: Date.now(), afterId: 0, limit: 10 };
    const claimed = await journal.send.claimDueBatches({ ...query, skip: new Set([ids[0]!]) });
    assert.deepEqual(
      claimed.first.map((b) => b.batch.id),
      [ids[2]],
    );
    assert.deepEqual(
      claimed.due.map((b) => b.batch.id),
      [ids[1]],
      'neither the queued batch nor the one already handed out first',
    );
    const again = await journal.send.claimDueBatches({ ...query, skip: new Set() });
    assert.deepEqual(again.first, [], 'a batch to send first is handed out first once');
    assert.deepEqual(
      again.due.map((b) => b.batch.id),
      ids,
    );

    const [one, two] = again.due.map((b) => ({ batch: b.batch, reqId: null }));
    const started = await journal.send.startAttempts([one!, two!, one!]);
    assert.equal(typeof started[0], 'number');
    assert.equal(typeof started[1], 'number');
    assert.equal(started[2], undefined, 'a batch already started is not started again');
    assert.equal((await journal.reads.inFlight(fileId)).requests, 2);
    assert.deepEqual(
      (await journal.send.claimDueBatches({ ...query, skip: new Set() })).due.map(
        (b) => b.batch.id,
      ),
      [ids[2]],
    );
  });
});
