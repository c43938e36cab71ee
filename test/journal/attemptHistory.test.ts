// What a batch's attempts say of whether, and since when, it may have reached the provider: the
// ground on which `smsdrop retry --unknown` keeps a batch's reqId (see send/policy.ts).
import assert from 'node:assert/strict';
import { it } from 'node:test';
import { attemptHistory, recentStarts } from '../../src/journal/sendReads.js';
import { journalWithOneGroup } from './fixture.js';
import { sqliteOf } from './sqliteOf.js';

const { db } = journalWithOneGroup('smsdrop-history-', {
  status: 'done',
  createdAt: '2026-11-21T00:00:00.000Z',
});
let nextBatch = 1;

/**
 * A batch under reqId 'R' with these attempts: [outcome (null: never finished), req_id,
 * started_at].
 */
function batchWith(attempts: Array<[string | null, string | null, string]>): number {
  const id = nextBatch++;
  sqliteOf(db)
    .prepare(
      "INSERT INTO batches (id, file_id, group_id, req_id, numbers, state, created_at, updated_at) VALUES (?, 1, 1, ?, 1, 'unknown', '', '')",
    )
    .run(id, `R${id}`);
  for (const [outcome, reqId, startedAt] of attempts) {
    sqliteOf(db)
      .prepare('INSERT INTO attempts (batch_id, req_id, started_at, outcome) VALUES (?, ?, ?, ?)')
      .run(id, reqId === 'R' ? `R${id}` : reqId, Date.parse(startedAt), outcome);
  }
  return id;
}
const historyOf = (id: number) => attemptHistory(db, id, `R${id}`);

it('the first attempt that may have arrived dates the doubt; refusals and connects that failed do not', () => {
  const id = batchWith([
    ['not-sent', 'R', '2026-11-21T01:00:00.000Z'],
    ['rejected:transient', 'R', '2026-11-21T02:00:00.000Z'],
    ['in-doubt', 'R', '2026-11-21T03:00:00.000Z'],
    ['interrupted', 'R', '2026-11-21T04:00:00.000Z'],
  ]);
  assert.deepEqual(historyOf(id), {
    everyAttemptCarriedReqId: true,
    partial: false,
    firstDoubtAt: '2026-11-21T03:00:00.000Z',
  });
});

it('an attempt never finished (a crash mid-request) may have arrived', () => {
  assert.equal(
    historyOf(batchWith([[null, 'R', '2026-11-21T05:00:00.000Z']])).firstDoubtAt,
    '2026-11-21T05:00:00.000Z',
  );
});

it('"may have sent some" makes it partial; an attempt without the reqId (or with another) is told', () => {
  assert.equal(
    historyOf(batchWith([['rejected:ambiguous', 'R', '2026-11-21T06:00:00.000Z']])).partial,
    true,
  );
  assert.equal(
    historyOf(batchWith([['in-doubt', null, '2026-11-21T07:00:00.000Z']])).everyAttemptCarriedReqId,
    false,
  );
  assert.equal(
    historyOf(batchWith([['in-doubt', 'other', '2026-11-21T07:00:00.000Z']]))
      .everyAttemptCarriedReqId,
    false,
  );
});

it('no attempt that may have arrived: no doubt', () => {
  assert.equal(
    historyOf(batchWith([['not-sent', 'R', '2026-11-21T08:00:00.000Z']])).firstDoubtAt,
    null,
  );
});

it('a message window counts the recent attempts that may have sent, with their numbers (recentStarts)', () => {
  const at = (hh: string) => `2026-11-22T${hh}:00:00.000Z`;
  const counted = [
    'accepted',
    'rejected:duplicate-request',
    'in-doubt',
    'interrupted',
    'rejected:ambiguous',
    null,
  ];
  const notCounted = [
    'not-sent',
    'rejected:rate-limited',
    'rejected:batch-rejected',
    'rejected:transient',
    'rejected:number-rejected',
  ];
  const ids = [...counted, ...notCounted].map((outcome) => batchWith([[outcome, 'R', at('10')]]));
  sqliteOf(db)
    .prepare('UPDATE batches SET numbers = 7 WHERE id IN (' + ids.join(',') + ')')
    .run();
  batchWith([['accepted', 'R', at('08')]]); // before the window
  const starts = recentStarts(db, Date.parse(at('09')));
  assert.deepEqual(
    starts,
    counted.map(() => ({ at: Date.parse(at('10')), numbers: 7 })),
  );
});
