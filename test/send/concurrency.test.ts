import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import pLimit from 'p-limit';
import { AdaptiveConcurrency, type ConcurrencyChange } from '../../src/send/concurrency.js';
import type { SendOutcome } from '../../src/provider/types.js';

const ok: SendOutcome = {
  kind: 'accepted',
  statusCode: '000000',
  smsMessageSid: 'x',
  dateCreated: '',
};
const tooMany = (statusCode = '111114'): SendOutcome => ({
  kind: 'rejected',
  statusCode,
  codeClass: 'transient',
});
const other: SendOutcome = { kind: 'rejected', statusCode: '160042', codeClass: 'number-rejected' };
const noAnswer: SendOutcome = { kind: 'not-sent', reason: 'refused' };

function adaptive(max: number) {
  const limit = pLimit(max);
  const changes: ConcurrencyChange[] = [];
  return { limit, changes, a: new AdaptiveConcurrency(limit, max, (c) => changes.push(c)) };
}

describe('AdaptiveConcurrency', () => {
  it('halves on each "too many" code, never below 1, and tells each change', () => {
    for (const code of ['111111', '111112', '111114', '111116']) {
      const { limit, a, changes } = adaptive(8);
      a.note(tooMany(code));
      assert.equal(limit.concurrency, 4, code);
      assert.deepEqual(changes, [{ from: 8, to: 4, statusCode: code }]);
    }
    const { limit, a } = adaptive(3);
    for (let i = 0; i < 20; i++) a.note(tooMany());
    assert.equal(limit.concurrency, 1);
  });

  it('the complaints of requests already in flight when it halved do not halve it again', () => {
    const { limit, a } = adaptive(8);
    for (let i = 0; i < 8; i++) a.note(tooMany()); // 8 in flight, all complain
    assert.equal(limit.concurrency, 4);
    a.note(tooMany()); // started under the new level
    assert.equal(limit.concurrency, 2);
  });

  it('grows back by one per level-many calm answers (additive), never above the setting', () => {
    const { limit, a, changes } = adaptive(4);
    a.note(tooMany());
    for (let i = 0; i < 3; i++) a.note(ok); // the others in flight then
    assert.equal(limit.concurrency, 2);
    a.note(ok);
    assert.equal(limit.concurrency, 2, 'one calm answer is not enough at level 2');
    a.note(other); // a business answer that is no complaint counts as calm
    assert.equal(limit.concurrency, 3);
    a.note(noAnswer); // no answer says nothing about the load
    a.note(ok);
    a.note(ok);
    assert.equal(limit.concurrency, 3);
    a.note(ok);
    assert.equal(limit.concurrency, 4);
    for (let i = 0; i < 50; i++) a.note(ok);
    assert.equal(limit.concurrency, 4, 'never above the setting');
    assert.deepEqual(
      changes.map((c) => c.to),
      [2, 3, 4],
    );
  });
});
