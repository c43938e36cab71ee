// The chaos verdict's judgement of cancelled files (chaos/control.ts checkCancels), on made-up
// evidence: each rule it holds fails on the case that breaks it, and passes on a clean run.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { JournalFile } from '../../chaos/check.js';
import { type CancelledBatch, checkCancels, newControlState } from '../../chaos/control.js';
import type { AcceptedRecord } from '../../src/simulator/types.js';

const CANCEL_AT = Date.parse('2026-12-06T09:00:10.000Z');

function stateWithCancel() {
  const state = newControlState();
  state.cancelledAt.set('a.csv', CANCEL_AT);
  return state;
}

const JOURNAL = [{ name: 'a.csv', control: 'cancelled' }] as JournalFile[];

function record(reqId: string, time: string): AcceptedRecord {
  return { time, smsMessageSid: 's', appId: 'app', templateId: '1', datas: [], to: [], reqId };
}

function batch(reqId: string, state: string, starts: string[]): CancelledBatch {
  return { fileName: 'a.csv', reqId, state, starts };
}

test('a clean cancel: one in flight received after it, the rest cancelled, one unknown', () => {
  const batches = [
    batch('r1', 'accepted', ['2026-12-06T09:00:09.900Z']),
    batch('r2', 'cancelled', []),
    batch('r3', 'unknown', ['2026-12-06T09:00:05.000Z']),
  ];
  const records = [record('r1', '2026-12-06T09:00:10.200Z')];
  assert.deepEqual(checkCancels(stateWithCancel(), JOURNAL, batches, records), []);
});

test('each broken rule is named', () => {
  const batches = [
    batch('r2', 'cancelled', []),
    batch('r3', 'unknown', []),
    batch('r4', 'accepted', ['2026-12-06T09:00:11.000Z']),
    batch('r5', 'accepted', []),
  ];
  const records = [
    record('r2', '2026-12-06T09:00:09.000Z'),
    record('r5', '2026-12-06T09:00:12.000Z'),
  ];
  const problems = checkCancels(stateWithCancel(), JOURNAL, batches, records);
  assert.equal(problems.length, 4, problems.join('\n'));
  assert.match(problems[0]!, /r2: cancelled, yet the simulator received it 1 time/);
  assert.match(problems[1]!, /r3: unknown, though no request of it ever started/);
  assert.match(problems[2]!, /r4: an attempt started at .*after the cancel returned/);
  assert.match(problems[3]!, /r5: received after the cancel returned .*no attempt started before/);
});

test('a cancel that returned 0 on a file the journal does not hold cancelled', () => {
  const journal = [{ name: 'a.csv', control: null }] as JournalFile[];
  assert.match(checkCancels(stateWithCancel(), journal, [], []).join(), /does not hold it/);
});
