// What to do with a batch after an attempt: a pure function of the outcome, the batch's history
// and the retry settings. Early returns, one per rule; the reasons are in provider-facts.md.
import type { SendOutcome } from '../provider/types.js';
import type { AttemptHistory, Transition } from '../journal/batches.js';
import { DOUBT, type Doubt } from '../journal/states.js';

export interface RetrySettings {
  reqIdOn: boolean;
  maxAttempts: number;
  retryBaseMs: number;
  retryMaxMs: number;
  rateLimitDelayMs: number;
  rateLimitMaxDeferrals: number;
  /**
   * The attempt got no answer, and the provider answered no request since this batch's last
   * attempts began (journal/batches.ts providerSilentFor): an outage, not this batch's fault. A
   * batch that would give up then keeps its attempts, and sending pauses instead.
   */
  providerSilent?: boolean;
}

/** The batch as it stands after the attempt was counted. */
export interface BatchHistory {
  attempts: number;
  deferrals: number;
  doubt: Doubt;
  numbers: number;
  /** Status code recorded by the previous attempt, if any. */
  lastStatusCode: string | null;
}

export interface Decision {
  transition: Transition;
  /** Set when sending must stop for the whole account (wrong token, suspended, no balance...). */
  pauseAccount?: string;
  /** The provider's status code that paused the account, when one did (not an outage). */
  pauseCode?: string;
}

const TIMESTAMP_EXPIRED = '111106';
const DUPLICATE_REQUEST = '160054';
/** "More than N numbers": the provider's limit is lower than ours (older docs say 100). */
const TOO_MANY_NUMBERS = new Set(['160048', '160017']);

export function decideAfterAttempt(
  outcome: SendOutcome,
  batch: BatchHistory,
  settings: RetrySettings,
  now: number,
  random: () => number = Math.random,
): Decision {
  const mayHaveBeenSent = batch.doubt !== DOUBT.none;
  /** failed means "not sent": when an earlier attempt may have got through, say unknown instead. */
  const notSent = (code: string | null, statusMsg: string): Decision =>
    mayHaveBeenSent
      ? {
          transition: {
            to: 'unknown',
            statusCode: code,
            statusMsg: `${statusMsg}; an earlier attempt may have been sent, so it is not resent`,
          },
        }
      : { transition: { to: 'failed', statusCode: code, statusMsg } };
  const retry = (reason: string, code: string | null, doubt: Doubt): Decision => {
    if (batch.attempts >= settings.maxAttempts && settings.providerSilent)
      return waitOutOutage(reason, code, doubt);
    if (batch.attempts >= settings.maxAttempts && resolvableUnderReqId(doubt))
      return resolveUnderReqId(reason, code);
    if (batch.attempts >= settings.maxAttempts) {
      const why = `gave up after ${batch.attempts} attempts: ${reason}`;
      return doubt !== DOUBT.none
        ? { transition: { to: 'unknown', statusCode: code, statusMsg: why } }
        : notSent(code, why);
    }
    const delay = backoffDelay(batch.attempts, settings, random);
    return {
      transition: {
        to: 'planned',
        nextAttemptAt: now + delay,
        doubt,
        statusCode: code,
        statusMsg: reason,
      },
    };
  };
  const waitOutOutage = (reason: string, code: string | null, doubt: Doubt): Decision => {
    const silence = `the provider answered no request during this batch's last ${batch.attempts} attempts (last: ${reason})`;
    return {
      transition: {
        to: 'planned',
        nextAttemptAt: now,
        doubt,
        resetAttempts: true,
        statusCode: code,
        statusMsg: `${silence}: an outage, so the batch keeps its attempts`,
      },
      pauseAccount: `${silence}; check the network and the provider's status`,
    };
  };
  /**
   * A batch that may have been accepted whole, every attempt under its reqId: while the provider
   * remembers that reqId, one more request cannot send it twice (it answers 160054, which settles
   * it as accepted), so giving up would leave `unknown` what a request can still settle. It goes
   * on, its attempts beyond SMSDROP_MAX_ATTEMPTS backed off to the largest delay, until an answer
   * settles it or the sender finds the reqId no longer safe (the provider's day is over, checked
   * before each request: whyNotUnderOwnReqId) and ends it unknown. After "may have sent some" a
   * 160054 settles nothing (which numbers?), so such a batch still ends unknown.
   */
  const resolvableUnderReqId = (doubt: Doubt): boolean =>
    settings.reqIdOn &&
    doubt !== DOUBT.part &&
    batch.doubt !== DOUBT.part &&
    (doubt === DOUBT.all || batch.doubt === DOUBT.all);
  const resolveUnderReqId = (reason: string, code: string | null): Decision => {
    const beyond = batch.attempts - settings.maxAttempts + 1;
    const delay = backoffDelay(settings.maxAttempts + beyond, settings, random);
    const statusMsg = `in doubt after ${batch.attempts} attempts (last: ${reason}); settling it under its own reqId, which the provider still remembers (attempt ${beyond} beyond SMSDROP_MAX_ATTEMPTS)`;
    return {
      transition: {
        to: 'planned',
        nextAttemptAt: now + delay,
        doubt: DOUBT.all,
        statusCode: code,
        statusMsg,
      },
    };
  };
  const unknownWithoutReqId = (code: string | null, why: string): Decision => ({
    transition: {
      to: 'unknown',
      statusCode: code,
      statusMsg: `${why}; not resent because reqId is off`,
    },
  });

  switch (outcome.kind) {
    case 'accepted':
      return {
        transition: {
          to: 'accepted',
          statusCode: outcome.statusCode,
          smsMessageSid: outcome.smsMessageSid,
          dateCreated: outcome.dateCreated,
        },
      };
    case 'not-sent':
      // A certificate refused now is refused at every attempt: a set-up mistake, not an outage.
      if (outcome.code === 'E_PROVIDER_TLS')
        return pauseWithoutBlame(
          null,
          `the provider's certificate is not trusted (${outcome.reason}): check SMSDROP_BASE_URL, or trust its CA with SMSDROP_CA_FILE`,
        );
      return retry(`not sent: ${outcome.reason}`, null, DOUBT.none);
    case 'in-doubt':
      if (!settings.reqIdOn)
        return unknownWithoutReqId(null, `may have been sent (${outcome.reason})`);
      return retry(`in doubt: ${outcome.reason}`, null, DOUBT.all);
  }

  const code = outcome.statusCode;
  const message = `${code}${outcome.statusMsg ? ` ${outcome.statusMsg}` : ''}`;
  switch (outcome.codeClass) {
    case 'duplicate-request':
      // The provider already took this reqId: an earlier attempt got through. After an ambiguous
      // answer ("failed, some may have been sent") that proves nothing about each number.
      if (batch.doubt === DOUBT.part)
        return {
          transition: {
            to: 'unknown',
            statusCode: code,
            statusMsg: `${message}: an earlier attempt was answered "may have sent some"; which numbers got it is unknown`,
          },
        };
      return {
        transition: {
          to: 'accepted',
          statusCode: DUPLICATE_REQUEST,
          smsMessageSid: null,
          dateCreated: null,
          statusMsg: 'accepted by an earlier attempt (160054 duplicate reqId)',
        },
      };
    case 'account-fatal':
      return pauseWithoutBlame(code, message);
    case 'clock':
      if (batch.lastStatusCode === TIMESTAMP_EXPIRED)
        return pauseWithoutBlame(
          code,
          `${message}: timestamp refused twice; check the host clock and SMSDROP_TIMEZONE`,
        );
      return {
        transition: {
          to: 'planned',
          nextAttemptAt: now,
          doubt: DOUBT.none,
          refundAttempt: true,
          statusCode: code,
          statusMsg: message,
        },
      };
    case 'transient':
      return retry(message, code, DOUBT.none);
    case 'ambiguous':
      if (!settings.reqIdOn)
        return unknownWithoutReqId(code, `${message}: the provider may have sent some`);
      return retry(message, code, DOUBT.part);
    case 'rate-limited':
      // A cap of one number (a daily cap lasts until tomorrow) must not hold the others back:
      // still capped after a deferral (a cap of minutes has passed by then), halves isolate it, as
      // for a rejected number. Alone, a number is deferred, then failed. (A cap of the template or
      // the account halves the batch down to single numbers, a deferral per halving: refusals
      // cost nothing, and each number still ends failed with the code.)
      if (
        batch.numbers > 1 &&
        !mayHaveBeenSent &&
        (batch.deferrals >= 1 || batch.deferrals >= settings.rateLimitMaxDeferrals)
      ) {
        return {
          transition: {
            to: 'split',
            statusCode: code,
            statusMsg: `${message}: still capped after a deferral; split to isolate the capped number(s)`,
          },
        };
      }
      if (batch.deferrals >= settings.rateLimitMaxDeferrals)
        return notSent(code, `${message} (still rate-limited after ${batch.deferrals} deferrals)`);
      return {
        transition: {
          to: 'planned',
          nextAttemptAt: now + settings.rateLimitDelayMs,
          doubt: DOUBT.none,
          deferral: true,
          refundAttempt: true,
          statusCode: code,
          statusMsg: message,
        },
      };
    case 'outside-hours':
      // The provider's hours for marketing messages, not the batch's fault: it waits, uncharged
      // and without a deferral counted, however long until they come.
      return {
        transition: {
          to: 'planned',
          nextAttemptAt: now + settings.rateLimitDelayMs,
          doubt: DOUBT.none,
          refundAttempt: true,
          statusCode: code,
          statusMsg: `${message}: waits for the hours the provider allows`,
        },
      };
    case 'number-rejected':
      return splitOrSettle(code, `${message}: split to isolate the rejected number(s)`, message);
    case 'batch-rejected':
      if (TOO_MANY_NUMBERS.has(code))
        return splitOrSettle(
          code,
          `${message}: split in halves to fit the provider's limit`,
          message,
        );
      return notSent(code, message);
  }

  /** Halves get fresh reqIds, so a batch that may already have been sent is never split. */
  function splitOrSettle(code: string, splitMsg: string, message: string): Decision {
    if (batch.numbers > 1 && !mayHaveBeenSent)
      return { transition: { to: 'split', statusCode: code, statusMsg: splitMsg } };
    return notSent(code, message);
  }
}

/** Not the batch's fault: it goes back to planned, uncharged, and sending stops for the account. */
function pauseWithoutBlame(code: string | null, message: string): Decision {
  return {
    transition: {
      to: 'planned',
      nextAttemptAt: 0,
      doubt: DOUBT.none,
      refundAttempt: true,
      statusCode: code,
      statusMsg: message,
    },
    pauseAccount: message,
    ...(code === null ? {} : { pauseCode: code }),
  };
}

/** Exponential backoff with jitter: base * 2^(attempt-1), capped, then scaled by 50..100%. */
export function backoffDelay(
  attempt: number,
  settings: Pick<RetrySettings, 'retryBaseMs' | 'retryMaxMs'>,
  random: () => number,
): number {
  const exponential = Math.min(
    settings.retryMaxMs,
    settings.retryBaseMs * 2 ** Math.max(0, attempt - 1),
  );
  return Math.round(exponential * (0.5 + random() * 0.5));
}

const dayFormatters = new Map<string, Intl.DateTimeFormat>();
function dayIn(date: Date, timeZone: string): string {
  let f = dayFormatters.get(timeZone);
  if (!f)
    dayFormatters.set(
      timeZone,
      (f = new Intl.DateTimeFormat('en-CA', {
        timeZone,
        year: 'numeric',
        month: '2-digit',
        day: '2-digit',
      })),
    );
  return f.format(date);
}

/**
 * How long before the provider's midnight a resend is no longer trusted to arrive on the same day:
 * the request still has to be journalled and to travel, and the provider's clock may run ahead of
 * ours. Inside this margin a batch in doubt becomes unknown instead (a person can still retry it).
 */
export const PROVIDER_DAY_MARGIN_MS = 5 * 60_000;

/**
 * The provider remembers a reqId for one natural day. Resending a batch that may already have
 * been accepted is safe only while that day lasts, so the first moment of doubt and now must fall
 * on the same day in China (the provider's zone) and in the zone we sign with, with a margin
 * (PROVIDER_DAY_MARGIN_MS) on both sides: the provider's clock may run ahead of ours (the resend
 * arrives after its midnight) or behind (the first request reached it before its midnight).
 */
export function sameProviderDay(firstDoubt: Date, now: Date, signingZone?: string): boolean {
  const zones = ['Asia/Shanghai', signingZone ?? Intl.DateTimeFormat().resolvedOptions().timeZone];
  const earliest = new Date(firstDoubt.getTime() - PROVIDER_DAY_MARGIN_MS);
  const latest = new Date(now.getTime() + PROVIDER_DAY_MARGIN_MS);
  return zones.every((zone) => dayIn(earliest, zone) === dayIn(latest, zone));
}

/**
 * Whether an explicit retry may send an unknown batch again under its own reqId: every attempt
 * carried that reqId, none was answered "may have sent some" (after which the provider's 160054
 * says nothing of each number), and the provider still remembers it (the first attempt that may
 * have reached it started on the same day as now). The provider then refuses a repeat (160054,
 * counted as accepted), so the retry cannot send a message twice. Otherwise only a new reqId is
 * left, which can.
 */
export function mayResendWithOwnReqId(
  history: AttemptHistory,
  now: Date,
  settings: { reqIdOn: boolean; timezone?: string | undefined },
): boolean {
  return (
    !history.partial &&
    history.firstDoubtAt !== null &&
    whyNotUnderOwnReqId(history, now, settings) === undefined
  );
}

/**
 * Why a batch that may already have reached the provider cannot go again under its own reqId now,
 * or undefined when it can: reqId is on, every attempt that may have arrived carried it (one that
 * went without it cannot be recognised), and the provider still remembers it (the first attempt
 * that may have arrived and now fall on one provider day; no day is checked without that moment).
 * The sender asks this before it resends a batch in doubt; an explicit retry asks more of it
 * (mayResendWithOwnReqId).
 */
export function whyNotUnderOwnReqId(
  history: Pick<AttemptHistory, 'everyAttemptCarriedReqId' | 'firstDoubtAt'>,
  now: Date,
  settings: { reqIdOn: boolean; timezone?: string | undefined },
): string | undefined {
  if (!settings.reqIdOn)
    return 'reqId is off (SMSDROP_REQ_ID), so the provider could not recognise a resend: not resent';
  if (!history.everyAttemptCarriedReqId)
    return 'an earlier attempt went without this reqId (reqId was off then), so the provider could not recognise a resend: not resent';
  if (
    history.firstDoubtAt !== null &&
    !sameProviderDay(new Date(history.firstDoubtAt), now, settings.timezone)
  ) {
    return 'the provider remembers a reqId for one day only, so resending now could send twice';
  }
  return undefined;
}
