// The SendStore port on each journal: a batch claimed, its attempt written before the request, and
// each kind of outcome recorded with the columns it sets (the journal rules of
// src/journalRules/outcomes.ts); a batch a crash left sending put back or ended.
import assert from 'node:assert/strict';
import { it } from 'node:test';
import type { AttemptResult, Transition } from '../../src/ports/records.js';
import { answersWithCodesSince, lastAnswer } from '../../src/journalRules/statusReads.js';
import { batchCode } from '../../src/journalRules/statusCodes.js';
import { onEachJournal, type Subject } from './journals.js';
import { AT, batchOf, seedBatch, seedFile, seedOpenAttempt, type Seeded } from './seed.js';
import { startClaimed } from './seed.js';

const ANSWERED: AttemptResult = { outcome: 'answered', statusCode: '000000', reason: 'ok' };

/** One batch claimed and its attempt written; the attempt's id. */
async function started(j: Subject, at: Seeded, batchId: number): Promise<number> {
  const attemptId = await startClaimed(j, at, batchId);
  assert.ok(attemptId !== undefined, 'the attempt is written');
  return attemptId;
}

async function sentWith(
  j: Subject,
  phones: string[],
  transition: Transition,
  result: AttemptResult = ANSWERED,
): Promise<{ at: Seeded; batchId: number; attemptId: number }> {
  const at = await seedFile(j);
  const batchId = await seedBatch(j, at, 'planned', phones);
  const attemptId = await started(j, at, batchId);
  await j.handle.send.recordOutcomes([{ batchId, transition, attempt: { id: attemptId, result } }]);
  return { at, batchId, attemptId };
}

onEachJournal('the SendStore', ({ open }) => {
  it('writes the attempt before the request: the batch is sending, its attempt open', async () => {
    const j = await open();
    const at = await seedFile(j);
    const batchId = await seedBatch(j, at, 'planned', ['13800000001']);
    const attemptId = await started(j, at, batchId);
    const batch = await batchOf(j, batchId);
    assert.deepEqual([batch.state, batch.attempts], ['sending', 1]);
    const attempt = await j.get('SELECT finished_at, req_id FROM attempts WHERE id = ?', attemptId);
    // The batch's own req_id is not kept twice (journalRules/attempts.ts).
    assert.deepEqual(attempt, { finished_at: null, req_id: '' });
    const history = await j.handle.send.attemptHistory(batchId, batch.req_id);
    assert.equal(history.everyAttemptCarriedReqId, true);
  });

  it('tells an attempt that carried no reqId, or another, from one that carried the batch’s', async () => {
    const j = await open();
    const at = await seedFile(j);
    const history = async (reqId: string | null): Promise<boolean> => {
      const batchId = await seedBatch(j, at, 'planned', ['13800000001']);
      const { req_id } = await batchOf(j, batchId);
      await j.run(
        `INSERT INTO attempts (batch_id, req_id, started_at) VALUES (?, ?, ${j.rules.dialect.storedTime('?')})`,
        batchId,
        reqId,
        AT,
      );
      return (await j.handle.send.attemptHistory(batchId, req_id)).everyAttemptCarriedReqId;
    };
    assert.equal(await history(''), true);
    assert.equal(await history(null), false);
    assert.equal(await history('another-req-id'), false);
  });

  it('records an acceptance with the provider’s message id and time', async () => {
    const j = await open();
    const { batchId, attemptId } = await sentWith(j, ['13800000001', '13900000001'], {
      to: 'accepted',
      statusCode: '000000',
      smsMessageSid: 'sid-1',
      dateCreated: '20261201080000',
    });
    const d = j.rules.dialect;
    const b = await j.get(
      `SELECT state, ${batchCode('batches')} AS status_code, ${d.sidText('sms_message_sid')} AS sms_message_sid,
         ${d.stampText('date_created')} AS date_created FROM batches WHERE id = ?`,
      batchId,
    );
    assert.deepEqual(b, {
      state: 'accepted',
      status_code: '000000',
      sms_message_sid: 'sid-1',
      date_created: '20261201080000',
    });
    const a = await j.get('SELECT outcome, status_code FROM attempts WHERE id = ?', attemptId);
    assert.deepEqual(a, { outcome: 'answered', status_code: '000000' });
  });

  it('keeps no code on a batch accepted with the provider’s success, and every other code', async () => {
    const j = await open();
    const codeOf = async (statusCode: string) => {
      const { batchId } = await sentWith(j, ['13800000001'], {
        to: 'accepted',
        statusCode,
        smsMessageSid: null,
        dateCreated: null,
      });
      return j.get(
        `SELECT status_code AS kept, ${batchCode('b')} AS read FROM batches b WHERE id = ?`,
        batchId,
      );
    };
    assert.deepEqual(await codeOf('000000'), { kept: null, read: '000000' });
    assert.deepEqual(await codeOf('160054'), { kept: '160054', read: '160054' });
  });

  it('keeps no code on an accepted attempt, and reads it back as the provider’s success', async () => {
    const j = await open();
    const accepted: AttemptResult = { outcome: 'accepted', statusCode: '000000', reason: null };
    const { attemptId } = await sentWith(
      j,
      ['13800000001'],
      {
        to: 'accepted',
        statusCode: '000000',
        smsMessageSid: 'sid-2',
        dateCreated: '20261201080000',
      },
      accepted,
    );
    const a = await j.get('SELECT outcome, status_code FROM attempts WHERE id = ?', attemptId);
    assert.deepEqual(a, { outcome: 'accepted', status_code: null });
    assert.equal((await j.rule(lastAnswer(j.rules.dialect)))?.status_code, '000000');
    assert.deepEqual(
      await j.rule(answersWithCodesSince(j.rules.dialect, ['000000', '160034'], AT)),
      [{ code: '000000', count: 1 }],
    );
  });

  it('reads back the provider’s smsMessageSid and dateCreated as it gave them, whatever their form', async () => {
    const j = await open();
    const d = j.rules.dialect;
    for (const [sid, created] of [
      ['0123456789abcdef0123456789abcdef', '20261201080000'],
      ['0123456789ABCDEF0123456789ABCDEF', '2026-12-01 08:00:00'],
      ['0123456789abcdef', '02026120108000'],
    ]) {
      const { batchId } = await sentWith(j, ['13800000001'], {
        to: 'accepted',
        statusCode: '000000',
        smsMessageSid: sid!,
        dateCreated: created!,
      });
      const b = await j.get(
        `SELECT ${d.sidText('sms_message_sid')} AS sid, ${d.stampText('date_created')} AS created
         FROM batches WHERE id = ?`,
        batchId,
      );
      assert.deepEqual(b, { sid, created });
    }
  });

  it('plans a batch again in doubt since its request left, its attempt refunded', async () => {
    const j = await open();
    const { batchId, attemptId } = await sentWith(
      j,
      ['13800000002'],
      {
        to: 'planned',
        nextAttemptAt: 12_345,
        doubt: 1,
        deferral: true,
        refundAttempt: true,
        statusCode: null,
        statusMsg: 'no answer',
      },
      { outcome: 'in-doubt', statusCode: null, reason: 'timeout' },
    );
    const b = await batchOf(j, batchId);
    const left = await j.get<{ started_at: string }>(
      `SELECT ${j.rules.dialect.timeText('started_at')} AS started_at FROM attempts WHERE id = ?`,
      attemptId,
    );
    assert.deepEqual(
      [b.state, b.next_attempt_at, b.maybe_sent, b.deferrals, b.attempts, b.status_msg],
      ['planned', 12_345, 1, 1, 0, 'no answer'],
    );
    assert.equal(b.first_doubt_at, left!.started_at, 'in doubt since the request left');
  });

  it('suppresses a lone number the provider refused for good, and not a batch of several', async () => {
    const j = await open();
    const refused: Transition = { to: 'failed', statusCode: '160034', statusMsg: 'blacklisted' };
    await sentWith(j, ['13800000003'], refused);
    await sentWith(j, ['13800000004', '13900000004'], refused);
    const listed = (await j.handle.suppression.list()).map((s) => [s.phone, s.source]);
    assert.deepEqual(listed, [['13800000003', 'provider']]);
  });

  it('splits a number-rejected batch into two planned halves with fresh reqIds, rows following', async () => {
    const j = await open();
    const phones = ['13800000005', '13800000006', '13800000007'];
    const { batchId } = await sentWith(j, phones, {
      to: 'split',
      statusCode: '160042',
      statusMsg: 'bad number',
    });
    assert.equal((await batchOf(j, batchId)).state, 'split');
    const halves = await j.all<{ id: number; numbers: number; state: string; req_id: string }>(
      'SELECT id, numbers, state, req_id FROM batches WHERE parent_id = ? ORDER BY id',
      batchId,
    );
    assert.deepEqual(
      halves.map((h) => [h.numbers, h.state]),
      [
        [2, 'planned'],
        [1, 'planned'],
      ],
    );
    assert.equal(new Set(halves.map((h) => h.req_id)).size, 2);
    const rows = await j.all<{ phone: string; batch_id: number }>(
      'SELECT phone, batch_id FROM rows WHERE phone IN (?, ?, ?) ORDER BY phone',
      ...phones,
    );
    assert.deepEqual(
      rows.map((r) => r.batch_id),
      [halves[0]!.id, halves[0]!.id, halves[1]!.id],
    );
  });

  it('takes a number off the provider’s list when a batch made from another is accepted with it', async () => {
    const j = await open();
    await j.handle.suppression.add(['13800000008'], 'blacklisted', 'provider');
    await j.handle.suppression.add(['13800000009'], 'asked us to stop', 'operator');
    const at = await seedFile(j);
    const parent = await seedBatch(j, at, 'split', ['13800000008', '13800000009']);
    const child = await seedBatch(j, at, 'planned', ['13800000008', '13800000009'], 10);
    await j.run('UPDATE batches SET parent_id = ? WHERE id = ?', parent, child);
    const attemptId = await started(j, at, child);
    await j.handle.send.recordOutcomes([
      {
        batchId: child,
        transition: { to: 'accepted', statusCode: '000000', smsMessageSid: 's', dateCreated: null },
        attempt: { id: attemptId, result: ANSWERED },
      },
    ]);
    const listed = (await j.handle.suppression.list()).map((s) => s.phone);
    assert.deepEqual(listed, ['13800000009'], 'the operator’s listing stays');
  });

  it('puts a batch a crash left sending back under its reqId, in doubt since it left', async () => {
    const j = await open();
    const at = await seedFile(j);
    const batchId = await seedBatch(j, at, 'sending', ['13800000010']);
    const attemptId = await seedOpenAttempt(j, batchId, 'r', AT);
    assert.equal(await j.handle.send.recoverInterrupted(at.fileId, true), 1);
    const b = await batchOf(j, batchId);
    assert.deepEqual([b.state, b.maybe_sent, b.first_doubt_at], ['planned', 1, AT]);
    const a = await j.get('SELECT outcome FROM attempts WHERE id = ?', attemptId);
    assert.deepEqual(a, { outcome: 'interrupted' });
  });

  it('ends a batch a crash left sending unknown when reqId is off', async () => {
    const j = await open();
    const at = await seedFile(j);
    const batchId = await seedBatch(j, at, 'sending', ['13800000011']);
    await seedOpenAttempt(j, batchId, null, AT);
    assert.equal(await j.handle.send.recoverInterrupted(at.fileId, false), 1);
    const b = await batchOf(j, batchId);
    assert.deepEqual([b.state, b.maybe_sent], ['unknown', 0]);
    assert.match(b.status_msg ?? '', /not resent because reqId is off/);
  });

  it('providerSilentFor: another node’s answers count on SQLite (one server), not on PostgreSQL', async () => {
    const j = await open();
    const at = await seedFile(j);
    const failing = await seedBatch(j, at, 'planned', ['13800000005']);
    const notSent: Transition = {
      to: 'planned',
      nextAttemptAt: 0,
      doubt: 0,
      statusCode: null,
      statusMsg: 'not sent: connect ECONNREFUSED',
    };
    for (let i = 0; i < 2; i++) {
      const attemptId = await started(j, at, failing);
      await j.handle.send.recordOutcomes([
        {
          batchId: failing,
          transition: notSent,
          attempt: {
            id: attemptId,
            result: { outcome: 'not-sent', statusCode: null, reason: 'x' },
          },
        },
      ]);
    }
    // Meanwhile another node of the account was answered (a node cut off from the provider alone).
    const elsewhere = await seedBatch(j, at, 'accepted', ['13800000006']);
    const now = new Date().toISOString();
    const time = j.rules.dialect.storedTime('?');
    await j.run(
      `INSERT INTO attempts (batch_id, req_id, started_at, finished_at, outcome, node)
       VALUES (?, 'r', ${time}, ${time}, 'accepted', 'another-node')`,
      elsewhere,
      now,
      now,
    );
    // PostgreSQL's nodes are machines of their own, each with its way to the provider.
    assert.equal(
      await j.handle.send.providerSilentFor(failing, 2),
      j.kind === 'PostgreSQL',
      'silent to this node',
    );
    assert.equal(await j.handle.send.providerSilentFor(failing, 3), false, 'two attempts only');
    const mine = await seedBatch(j, at, 'planned', ['13800000007']);
    const attemptId = await started(j, at, mine);
    await j.handle.send.recordOutcomes([
      {
        batchId: mine,
        transition: { to: 'accepted', statusCode: '000000', smsMessageSid: 's', dateCreated: null },
        attempt: {
          id: attemptId,
          result: { outcome: 'accepted', statusCode: '000000', reason: null },
        },
      },
    ]);
    assert.equal(await j.handle.send.providerSilentFor(failing, 2), false, 'this node answered');
  });
});
