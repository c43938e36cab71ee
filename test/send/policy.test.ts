import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { SendOutcome } from '../../src/provider/types.js';
import {
  backoffDelay,
  type BatchHistory,
  decideAfterAttempt,
  type RetrySettings,
  mayResendWithOwnReqId,
  sameProviderDay,
} from '../../src/send/policy.js';
import { DOUBT } from '../../src/ports/states.js';

const settings: RetrySettings = {
  reqIdOn: true,
  maxAttempts: 3,
  retryBaseMs: 100,
  retryMaxMs: 1000,
  rateLimitDelayMs: 60_000,
  rateLimitMaxDeferrals: 2,
};
const fresh: BatchHistory = {
  attempts: 1,
  deferrals: 0,
  doubt: DOUBT.none,
  numbers: 10,
  lastStatusCode: null,
};
const NOW = 1_000_000;
const rejected = (
  statusCode: string,
  codeClass: Extract<SendOutcome, { kind: 'rejected' }>['codeClass'],
): SendOutcome => ({ kind: 'rejected', statusCode, codeClass });
const decide = (
  outcome: SendOutcome,
  batch: Partial<BatchHistory> = {},
  s: Partial<RetrySettings> = {},
) => decideAfterAttempt(outcome, { ...fresh, ...batch }, { ...settings, ...s }, NOW, () => 0.5);

describe('decideAfterAttempt', () => {
  it('accepted -> accepted with the message id', () => {
    const d = decide({
      kind: 'accepted',
      statusCode: '000000',
      smsMessageSid: 'abc',
      dateCreated: '20261121100000',
    });
    assert.deepEqual(d.transition, {
      to: 'accepted',
      statusCode: '000000',
      smsMessageSid: 'abc',
      dateCreated: '20261121100000',
    });
  });

  it('160054 duplicate reqId counts as accepted', () => {
    assert.equal(decide(rejected('160054', 'duplicate-request')).transition.to, 'accepted');
  });

  it('in doubt with reqId on: retried later with the doubt remembered', () => {
    const t = decide({ kind: 'in-doubt', reason: 'timeout' }).transition;
    assert.equal(t.to, 'planned');
    assert.ok(t.to === 'planned' && t.doubt === DOUBT.all && t.nextAttemptAt > NOW);
  });

  it('in doubt with reqId off: unknown, never resent', () => {
    assert.equal(
      decide({ kind: 'in-doubt', reason: 'reset' }, {}, { reqIdOn: false }).transition.to,
      'unknown',
    );
    assert.equal(
      decide(rejected('160050', 'ambiguous'), {}, { reqIdOn: false }).transition.to,
      'unknown',
    );
  });

  it('out of attempts: failed when nothing may have been sent, unknown when something may have and its reqId cannot settle it', () => {
    assert.equal(
      decide({ kind: 'not-sent', reason: 'refused' }, { attempts: 3 }).transition.to,
      'failed',
    );
    assert.equal(decide(rejected('160000', 'transient'), { attempts: 3 }).transition.to, 'failed');
    assert.equal(
      decide(
        { kind: 'not-sent', reason: 'refused' },
        { attempts: 3, doubt: DOUBT.all },
        { reqIdOn: false },
      ).transition.to,
      'unknown',
    );
    assert.equal(
      decide({ kind: 'in-doubt', reason: 'timeout' }, { attempts: 3, doubt: DOUBT.part }).transition
        .to,
      'unknown',
      'after "may have sent some", 160054 settles nothing',
    );
    assert.equal(decide(rejected('160050', 'ambiguous'), { attempts: 3 }).transition.to, 'unknown');
  });

  it('out of attempts, in doubt, every attempt under its reqId: goes on under that reqId (160054 will settle it), backed off, not unknown', () => {
    for (const [outcome, batch] of [
      [{ kind: 'in-doubt', reason: 'timeout' }, { attempts: 3 }],
      [
        { kind: 'not-sent', reason: 'refused' },
        { attempts: 3, doubt: DOUBT.all },
      ],
      [rejected('160000', 'transient'), { attempts: 7, doubt: DOUBT.all }],
    ] as const) {
      const t = decide(outcome, batch).transition;
      assert.ok(t.to === 'planned' && t.doubt === DOUBT.all && !t.resetAttempts, JSON.stringify(t));
      assert.ok(
        t.to === 'planned' && t.nextAttemptAt >= NOW + settings.retryMaxMs / 2,
        'backed off to the largest delay',
      );
      assert.match(
        t.statusMsg,
        /settling it under its own reqId, which the provider still remembers \(attempt \d+ beyond SMSDROP_MAX_ATTEMPTS\)/,
      );
    }
  });

  it('account-fatal: back to planned, uncharged, and the account pauses', () => {
    const d = decide(rejected('111109', 'account-fatal'));
    assert.equal(d.transition.to, 'planned');
    assert.ok(d.transition.to === 'planned' && d.transition.refundAttempt);
    assert.match(d.pauseAccount ?? '', /111109/);
  });

  it('clock: retried at once the first time, pauses the account the second time', () => {
    const first = decide(rejected('111106', 'clock'));
    assert.equal(first.transition.to, 'planned');
    assert.equal(first.pauseAccount, undefined);
    const second = decide(rejected('111106', 'clock'), { lastStatusCode: '111106' });
    assert.ok(second.pauseAccount);
  });

  it('out of attempts while the provider answers nothing (an outage): planned again with its attempts reset, and the account pauses', () => {
    const d = decide(
      { kind: 'in-doubt', reason: 'HTTP 500' },
      { attempts: settings.maxAttempts },
      { providerSilent: true },
    );
    assert.ok(
      d.transition.to === 'planned' &&
        d.transition.resetAttempts &&
        d.transition.doubt === DOUBT.all,
    );
    assert.match(d.pauseAccount ?? '', /answered no request during this batch's last \d+ attempts/);
    const alone = decide(
      { kind: 'in-doubt', reason: 'HTTP 500' },
      { attempts: settings.maxAttempts },
    );
    assert.ok(
      alone.transition.to === 'planned' && !alone.transition.resetAttempts && !alone.pauseAccount,
      'with answers in between: its own trouble, settled under its reqId',
    );
    assert.equal(
      decide({ kind: 'not-sent', reason: 'ECONNREFUSED' }, { attempts: settings.maxAttempts })
        .transition.to,
      'failed',
    );
  });

  it('160071 outside the allowed hours: waits, uncharged and without a deferral counted, however often it comes back', () => {
    for (const deferrals of [0, 2, 50]) {
      const t = decide(rejected('160071', 'outside-hours'), {
        numbers: 200,
        deferrals,
        attempts: 3,
      }).transition;
      assert.equal(t.to, 'planned', `deferrals ${deferrals}`);
      assert.ok(
        t.to === 'planned' &&
          t.refundAttempt === true &&
          !t.deferral &&
          t.nextAttemptAt === NOW + settings.rateLimitDelayMs,
      );
    }
  });

  it('rate-limited: a batch of several numbers still capped after a deferral is split to isolate the capped one (the others must not wait for tomorrow)', () => {
    assert.equal(
      decide(rejected('160040', 'rate-limited'), { numbers: 200 }).transition.to,
      'planned',
      'deferred first: a cap of minutes passes',
    );
    const t = decide(rejected('160040', 'rate-limited'), { numbers: 200, deferrals: 1 }).transition;
    assert.deepEqual([t.to, t.statusCode], ['split', '160040']);
    assert.equal(
      decide(rejected('160040', 'rate-limited'), { numbers: 200 }, { rateLimitMaxDeferrals: 0 })
        .transition.to,
      'split',
      'no deferrals allowed: split at once',
    );
    assert.equal(
      decide(rejected('160040', 'rate-limited'), { numbers: 200, deferrals: 1, doubt: DOUBT.all })
        .transition.to,
      'planned',
      'never split once it may have been sent (halves get fresh reqIds)',
    );
  });

  it('rate-limited: one number is deferred with the long delay, then failed with the code', () => {
    const t = decide(rejected('160038', 'rate-limited'), { numbers: 1 }).transition;
    assert.ok(
      t.to === 'planned' && t.deferral && t.nextAttemptAt === NOW + settings.rateLimitDelayMs,
    );
    const last = decide(rejected('160038', 'rate-limited'), {
      numbers: 1,
      deferrals: 2,
    }).transition;
    assert.deepEqual([last.to, last.to === 'failed' && last.statusCode], ['failed', '160038']);
  });

  it('number-rejected: split while more than one number, failed for a single number', () => {
    assert.equal(
      decide(rejected('160034', 'number-rejected'), { numbers: 2 }).transition.to,
      'split',
    );
    assert.equal(
      decide(rejected('160034', 'number-rejected'), { numbers: 1 }).transition.to,
      'failed',
    );
  });

  it('batch-rejected: failed at once with the code', () => {
    const t = decide(rejected('160052', 'batch-rejected')).transition;
    assert.deepEqual([t.to, t.to === 'failed' && t.statusCode], ['failed', '160052']);
  });
});

describe('decideAfterAttempt after an attempt that may have been sent', () => {
  const doubted = { doubt: DOUBT.all } as const;
  it('never calls it failed: rate-limited to the end, batch-rejected -> unknown', () => {
    assert.equal(
      decide(rejected('160056', 'rate-limited'), { ...doubted, deferrals: 2 }).transition.to,
      'unknown',
    );
    assert.equal(decide(rejected('160052', 'batch-rejected'), doubted).transition.to, 'unknown');
  });

  it('never splits it (halves get fresh reqIds): unknown instead', () => {
    assert.equal(
      decide(rejected('160034', 'number-rejected'), { ...doubted, numbers: 10 }).transition.to,
      'unknown',
    );
  });

  it('160054 after an ambiguous answer ("may have sent some") is unknown, not accepted', () => {
    assert.equal(
      decide(rejected('160054', 'duplicate-request'), { doubt: DOUBT.part }).transition.to,
      'unknown',
    );
    assert.equal(
      decide(rejected('160054', 'duplicate-request'), doubted).transition.to,
      'accepted',
    );
  });
});

describe('decideAfterAttempt: too many numbers for the provider', () => {
  it('160048 splits the batch in halves (the provider may allow fewer than configured)', () => {
    assert.equal(
      decide(rejected('160048', 'batch-rejected'), { numbers: 200 }).transition.to,
      'split',
    );
    assert.equal(
      decide(
        { kind: 'rejected', statusCode: '160048', codeClass: 'batch-rejected', local: true },
        { numbers: 200 },
      ).transition.to,
      'split',
    );
    assert.equal(
      decide(rejected('160048', 'batch-rejected'), { numbers: 1 }).transition.to,
      'failed',
    );
  });
});

describe('backoffDelay', () => {
  it('doubles per attempt, is capped, and jitters between 50% and 100%', () => {
    const s = { retryBaseMs: 100, retryMaxMs: 1000 };
    assert.equal(
      backoffDelay(1, s, () => 1),
      100,
    );
    assert.equal(
      backoffDelay(3, s, () => 1),
      400,
    );
    assert.equal(
      backoffDelay(10, s, () => 1),
      1000,
    );
    assert.equal(
      backoffDelay(3, s, () => 0),
      200,
    );
  });
});

describe('sameProviderDay', () => {
  it('is true within one China day and false across China midnight', () => {
    // 2026-11-21 15:00Z is 23:00 in Shanghai; 16:30Z is 00:30 the next day there.
    assert.equal(
      sameProviderDay(
        new Date('2026-11-21T10:00:00Z'),
        new Date('2026-11-21T15:00:00Z'),
        'Asia/Shanghai',
      ),
      true,
    );
    assert.equal(
      sameProviderDay(
        new Date('2026-11-21T15:00:00Z'),
        new Date('2026-11-21T16:30:00Z'),
        'Asia/Shanghai',
      ),
      false,
    );
  });
  it('is false in the last minutes before China midnight: the resend could arrive after it', () => {
    // 15:54:00Z is 23:54 in Shanghai, 15:57:30Z is 23:57:30: within PROVIDER_DAY_MARGIN_MS of
    // midnight.
    assert.equal(
      sameProviderDay(
        new Date('2026-11-21T10:00:00Z'),
        new Date('2026-11-21T15:54:00Z'),
        'Asia/Shanghai',
      ),
      true,
    );
    assert.equal(
      sameProviderDay(
        new Date('2026-11-21T10:00:00Z'),
        new Date('2026-11-21T15:57:30Z'),
        'Asia/Shanghai',
      ),
      false,
    );
  });
  it('is false in the first minutes after China midnight: the first request may have reached a provider whose clock runs behind', () => {
    // 16:00:30Z is 00:00:30 on the 22nd in Shanghai.
    assert.equal(
      sameProviderDay(
        new Date('2026-11-21T16:00:30Z'),
        new Date('2026-11-21T16:20:00Z'),
        'Asia/Shanghai',
      ),
      false,
    );
    assert.equal(
      sameProviderDay(
        new Date('2026-11-21T16:06:00Z'),
        new Date('2026-11-21T16:20:00Z'),
        'Asia/Shanghai',
      ),
      true,
    );
  });
});

describe('mayResendWithOwnReqId (smsdrop retry --unknown)', () => {
  const history = {
    everyAttemptCarriedReqId: true,
    partial: false,
    firstDoubtAt: '2026-11-21T02:00:00Z',
  };
  const now = new Date('2026-11-21T09:00:00Z');
  const on = { reqIdOn: true, timezone: 'Asia/Shanghai' };
  it('yes: every attempt carried the reqId, none half-sent, and the provider still remembers it today', () => {
    assert.equal(mayResendWithOwnReqId(history, now, on), true);
  });
  it('no: reqId off now, an attempt without it, an answer "may have sent some", no doubt recorded, or a new day', () => {
    assert.equal(mayResendWithOwnReqId(history, now, { ...on, reqIdOn: false }), false);
    assert.equal(
      mayResendWithOwnReqId({ ...history, everyAttemptCarriedReqId: false }, now, on),
      false,
    );
    assert.equal(mayResendWithOwnReqId({ ...history, partial: true }, now, on), false);
    assert.equal(mayResendWithOwnReqId({ ...history, firstDoubtAt: null }, now, on), false);
    // 2026-11-21T16:30Z is already the 22nd in China.
    assert.equal(mayResendWithOwnReqId(history, new Date('2026-11-21T16:30:00Z'), on), false);
  });
});
