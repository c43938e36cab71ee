// What to do with a batch after an attempt: a pure function of the outcome, the batch's history
// and the retry settings. Early returns, one per rule; the reasons are in provider-facts.md.
import type { SendOutcome } from '../provider/types.js';
import type { Transition } from '../journal/batches.js';

export interface RetrySettings {
  reqIdOn: boolean;
  maxAttempts: number;
  retryBaseMs: number;
  retryMaxMs: number;
  rateLimitDelayMs: number;
  rateLimitMaxDeferrals: number;
}

/** The batch as it stands after the attempt was counted. */
export interface BatchHistory {
  attempts: number;
  deferrals: number;
  maybeSent: boolean;
  numbers: number;
  /** Status code recorded by the previous attempt, if any. */
  lastStatusCode: string | null;
}

export interface Decision {
  transition: Transition;
  /** Set when sending must stop for the whole account (wrong token, suspended, no balance...). */
  pauseAccount?: string;
}

const TIMESTAMP_EXPIRED = '111106';
const DUPLICATE_REQUEST = '160054';

export function decideAfterAttempt(
  outcome: SendOutcome,
  batch: BatchHistory,
  settings: RetrySettings,
  now: number,
  random: () => number = Math.random,
): Decision {
  const retry = (reason: string, code: string | null, maybeSent: boolean): Decision => {
    const everMaybeSent = batch.maybeSent || maybeSent;
    if (batch.attempts >= settings.maxAttempts) {
      const why = `gave up after ${batch.attempts} attempts: ${reason}`;
      // failed means "not sent"; if any attempt may have reached the provider, we cannot say that.
      return { transition: { to: everMaybeSent ? 'unknown' : 'failed', statusCode: code, statusMsg: why } };
    }
    const delay = backoffDelay(batch.attempts, settings, random);
    return { transition: { to: 'planned', nextAttemptAt: now + delay, maybeSent, statusCode: code, statusMsg: reason } };
  };

  switch (outcome.kind) {
    case 'accepted':
      return { transition: { to: 'accepted', statusCode: outcome.statusCode, smsMessageSid: outcome.smsMessageSid, dateCreated: outcome.dateCreated } };
    case 'not-sent':
      return retry(`not sent: ${outcome.reason}`, null, false);
    case 'in-doubt':
      if (!settings.reqIdOn) {
        return { transition: { to: 'unknown', statusCode: null, statusMsg: `may have been sent (${outcome.reason}); not resent because reqId is off` } };
      }
      return retry(`in doubt: ${outcome.reason}`, null, true);
  }

  const code = outcome.statusCode;
  const message = `${code}${outcome.statusMsg ? ` ${outcome.statusMsg}` : ''}`;
  switch (outcome.codeClass) {
    case 'duplicate-request':
      // The provider already accepted this reqId: an earlier attempt got through.
      return { transition: { to: 'accepted', statusCode: DUPLICATE_REQUEST, smsMessageSid: null, dateCreated: null, statusMsg: 'accepted by an earlier attempt (160054 duplicate reqId)' } };
    case 'account-fatal':
      return pauseWithoutBlame(code, message);
    case 'clock':
      if (batch.lastStatusCode === TIMESTAMP_EXPIRED) return pauseWithoutBlame(code, `${message}: timestamp refused twice; check the host clock and SMSDROP_TIMEZONE`);
      return { transition: { to: 'planned', nextAttemptAt: now, maybeSent: false, refundAttempt: true, statusCode: code, statusMsg: message } };
    case 'transient':
      return retry(message, code, false);
    case 'ambiguous':
      if (!settings.reqIdOn) return { transition: { to: 'unknown', statusCode: code, statusMsg: `${message}: the provider may have sent some; not resent because reqId is off` } };
      return retry(message, code, true);
    case 'rate-limited':
      if (batch.deferrals >= settings.rateLimitMaxDeferrals) return { transition: { to: 'failed', statusCode: code, statusMsg: `${message} (still rate-limited after ${batch.deferrals} deferrals)` } };
      return { transition: { to: 'planned', nextAttemptAt: now + settings.rateLimitDelayMs, maybeSent: false, deferral: true, refundAttempt: true, statusCode: code, statusMsg: message } };
    case 'number-rejected':
      if (batch.numbers > 1) return { transition: { to: 'split', statusCode: code, statusMsg: `${message}: split to isolate the rejected number(s)` } };
      return { transition: { to: 'failed', statusCode: code, statusMsg: message } };
    case 'batch-rejected':
      return { transition: { to: 'failed', statusCode: code, statusMsg: message } };
  }
}

/** Not the batch's fault: it goes back to planned, uncharged, and sending stops for the account. */
function pauseWithoutBlame(code: string, message: string): Decision {
  return {
    transition: { to: 'planned', nextAttemptAt: 0, maybeSent: false, refundAttempt: true, statusCode: code, statusMsg: message },
    pauseAccount: message,
  };
}

/** Exponential backoff with jitter: base * 2^(attempt-1), capped, then scaled by 50..100%. */
export function backoffDelay(attempt: number, settings: Pick<RetrySettings, 'retryBaseMs' | 'retryMaxMs'>, random: () => number): number {
  const exponential = Math.min(settings.retryMaxMs, settings.retryBaseMs * 2 ** Math.max(0, attempt - 1));
  return Math.round(exponential * (0.5 + random() * 0.5));
}

const dayFormatters = new Map<string, Intl.DateTimeFormat>();
function dayIn(date: Date, timeZone: string): string {
  let f = dayFormatters.get(timeZone);
  if (!f) dayFormatters.set(timeZone, (f = new Intl.DateTimeFormat('en-CA', { timeZone, year: 'numeric', month: '2-digit', day: '2-digit' })));
  return f.format(date);
}

/**
 * The provider remembers a reqId for one natural day. Resending a batch that may already have
 * been accepted is safe only while that day lasts, so the first moment of doubt and now must fall
 * on the same day in China (the provider's zone) and in the zone we sign with.
 */
export function sameProviderDay(firstDoubt: Date, now: Date, signingZone?: string): boolean {
  const zones = ['Asia/Shanghai', signingZone ?? Intl.DateTimeFormat().resolvedOptions().timeZone];
  return zones.every((zone) => dayIn(firstDoubt, zone) === dayIn(now, zone));
}
