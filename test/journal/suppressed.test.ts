// Which failed batches suppress their number: one number alone, refused with a code that says it
// will never take a message (blacklisted, unsubscribed); not a wrong format, not a whole batch.
import assert from 'node:assert/strict';
import path from 'node:path';
import { it } from 'node:test';
import { applyTransition } from '../../src/journal/sendMoves.js';
import { openJournal } from '../../src/journal/open.js';
import {
  listSuppressed,
  suppressionCheck,
  suppressNumbers,
  unsuppressNumbers,
} from '../../src/journal/suppression.js';
import { journalWithOneGroup } from './fixture.js';
import { sqliteOf } from './sqliteOf.js';

const { db, dir } = journalWithOneGroup('smsdrop-suppressed-', {
  status: 'sending',
  createdAt: '2026-11-22T00:00:00Z',
});
let nextBatch = 1;

function failBatch(phones: string[], code: string): void {
  const id = nextBatch++;
  sqliteOf(db)
    .prepare(
      "INSERT INTO batches (id, file_id, group_id, req_id, numbers, state, created_at, updated_at) VALUES (?, 1, 1, ?, ?, 'sending', '', '')",
    )
    .run(id, `R${id}`, phones.length);
  sqliteOf(db)
    .prepare('INSERT INTO batch_numbers (batch_id, phones) VALUES (?, ?)')
    .run(id, phones.join(','));
  applyTransition(db, id, { to: 'failed', statusCode: code, statusMsg: 'refused' });
}
const suppressed = () => listSuppressed(db).map((n) => n.phone);

it('suppresses a number refused alone as blacklisted or unsubscribed, with the code as the reason', () => {
  failBatch(['13800000001'], '160034');
  failBatch(['13800000002'], '160051');
  assert.deepEqual(suppressed(), ['13800000001', '13800000002']);
  assert.match(listSuppressed(db)[0]!.reason, /^160034: number on a blacklist/);
});

it('leaves numbers of a wrong format, and the numbers of a batch refused as a whole', () => {
  failBatch(['13800000003'], '160042');
  failBatch(['13800000004', '13800000005'], '160034');
  assert.deepEqual(suppressed(), ['13800000001', '13800000002']);
});

it('a number the provider accepts again (a retry after the block was lifted) leaves the list; one people listed stays', () => {
  suppressNumbers(db, ['13800000009'], 'opted out', 'list');
  const id = nextBatch++;
  sqliteOf(db)
    .prepare(
      "INSERT INTO batches (id, file_id, group_id, parent_id, req_id, numbers, state, created_at, updated_at) VALUES (?, 1, 1, 1, ?, 3, 'sending', '', '')",
    )
    .run(id, `R${id}`);
  sqliteOf(db)
    .prepare('INSERT INTO batch_numbers (batch_id, phones) VALUES (?, ?)')
    .run(id, '13800000001,13800000009,13800000007');
  applyTransition(db, id, {
    to: 'accepted',
    statusCode: '000000',
    smsMessageSid: 'sid',
    dateCreated: '20261122000000',
  });
  assert.deepEqual(suppressed(), ['13800000002', '13800000009']);
});

it('an empty list costs intake no look-up; a listed number gets its reason, its source and its day', () => {
  const fresh = openJournal(path.join(dir, 'fresh.sqlite'));
  try {
    assert.equal(suppressionCheck(fresh), undefined);
    assert.equal(suppressNumbers(fresh, ['13900000001', '13900000001'], 'opted out', 'list'), 1);
    const why = suppressionCheck(fresh)!;
    assert.match(why('13900000001')!, /^suppressed \(list, \d{4}-\d\d-\d\d\): opted out$/);
    assert.equal(why('13900000002'), undefined);
    assert.equal(unsuppressNumbers(fresh, ['13900000001', '13900000002']), 1);
    assert.equal(suppressionCheck(fresh), undefined);
  } finally {
    fresh.close();
  }
});
