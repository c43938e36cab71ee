// What to do with a batch after an attempt: a pure function of the outcome, the batch's history
// and the retry settings. A handler per outcome kind, and per class of rejection; the reasons are
// in provider-facts.md.
import type { Config } from '../config/index.js';
import type { OutcomeKind, RejectionClass, SendOutcome } from '../provider/types.js';
import type { Transition } from '../ports/records.js';
import { DOUBT, type Doubt } from '../ports/states.js';

export {
  mayResendWithOwnReqId,
  PROVIDER_DAY_MARGIN_MS,
  sameProviderDay,
  whyNotUnderOwnReqId,
} from './ownReqId.js';

export interface RetrySettings {
  reqIdOn: boolean;
  maxAttempts: number;
  retryBaseMs: number;
  retryMaxMs: number;
  rateLimitDelayMs: number;
  rateLimitMaxDeferrals: number;
  /**
   * The attempt got no answer, and the provider answered no request (of this node, on
   * PostgreSQL) since this batch's last attempts began (journalRules/providerSilence.ts): an
   * outage, not this batch's fault. A batch that would give up then keeps its attempts, and
   * sending pauses instead.
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

/** What every rule knows of the attempt besides its outcome. */
interface Attempt {
  batch: BatchHistory;
  settings: RetrySettings;
  now: number;
  random: () => number;
  /** An earlier attempt may have got through (the batch's doubt before this one). */
  mayHaveBeenSent: boolean;
}

type OutcomeHandlers = {
  [K in OutcomeKind]: (outcome: Extract<SendOutcome, { kind: K }>, attempt: Attempt) => Decision;
};
type OutcomeHandler = (outcome: SendOutcome, attempt: Attempt) => Decision;

/** A rejection's code, and the code with the provider's message for the status line. */
interface Rejection {
  code: string;
  message: string;
}

export function decideAfterAttempt(
  outcome: SendOutcome,
  batch: BatchHistory,
  settings: RetrySettings,
  now: number,
  random: () => number = Math.random,
): Decision {
  const mayHaveBeenSent = batch.doubt !== DOUBT.none;
  const attempt: Attempt = { batch, settings, now, random, mayHaveBeenSent };
  // The table pairs each kind with its own handler; TypeScript cannot follow that through a lookup.
  const handle = AFTER_OUTCOME[outcome.kind] as OutcomeHandler;
  return handle(outcome, attempt);
}

const AFTER_OUTCOME: OutcomeHandlers = {
  accepted: (outcome) => ({
    transition: {
      to: 'accepted',
      statusCode: outcome.statusCode,
      smsMessageSid: outcome.smsMessageSid,
      dateCreated: outcome.dateCreated,
    },
  }),
  // A certificate refused now is refused at every attempt: a set-up mistake, not an outage.
  'not-sent': (outcome, attempt) =>
    outcome.code === 'E_PROVIDER_TLS'
      ? pauseWithoutBlame(
          null,
          `the provider's certificate is not trusted (${outcome.reason}): check SMSDROP_BASE_URL, or trust its CA with SMSDROP_CA_FILE`,
        )
      : retry(attempt, `not sent: ${outcome.reason}`, null, DOUBT.none),
  'in-doubt': (outcome, attempt) =>
    attempt.settings.reqIdOn
      ? retry(attempt, `in doubt: ${outcome.reason}`, null, DOUBT.all)
      : unknownWithoutReqId(null, `may have been sent (${outcome.reason})`),
  rejected: (outcome, attempt) => {
    const code = outcome.statusCode;
    const message = `${code}${outcome.statusMsg ? ` ${outcome.statusMsg}` : ''}`;
    return AFTER_REJECTION[outcome.codeClass]({ code, message }, attempt);
  },
};

const AFTER_REJECTION: Record<RejectionClass, (r: Rejection, attempt: Attempt) => Decision> = {
  'duplicate-request': duplicateRequest,
  'account-fatal': ({ code, message }) => pauseWithoutBlame(code, message),
  clock: timestampRefused,
  transient: ({ code, message }, attempt) => retry(attempt, message, code, DOUBT.none),
  ambiguous: ({ code, message }, attempt) =>
    attempt.settings.reqIdOn
      ? retry(attempt, message, code, DOUBT.part)
      : unknownWithoutReqId(code, `${message}: the provider may have sent some`),
  'rate-limited': rateLimited,
  'outside-hours': outsideHours,
  'number-rejected': ({ code, message }, attempt) =>
    splitOrSettle(attempt, code, `${message}: split to isolate the rejected number(s)`, message),
  'batch-rejected': ({ code, message }, attempt) =>
    TOO_MANY_NUMBERS.has(code)
      ? splitOrSettle(
          attempt,
          code,
          `${message}: split in halves to fit the provider's limit`,
          message,
        )
      : notSent(attempt, code, message),
};

/**
 * The provider already took this reqId: an earlier attempt got through. After an ambiguous answer
 * ("failed, some may have been sent") that proves nothing about each number.
 */
function duplicateRequest({ code, message }: Rejection, { batch }: Attempt): Decision {
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
}

/** A refused timestamp is sent again at once, uncharged; refused twice, the clock is wrong. */
function timestampRefused({ code, message }: Rejection, { batch, now }: Attempt): Decision {
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
}

/**
 * A cap of one number (a daily cap lasts until tomorrow) must not hold the others back: still
 * capped after a deferral (a cap of minutes has passed by then), halves isolate it, as for a
 * rejected number. Alone, a number is deferred, then failed. (A cap of the template or the account
 * halves the batch down to single numbers, a deferral per halving: refusals cost nothing, and each
 * number still ends failed with the code.)
 */
function rateLimited({ code, message }: Rejection, attempt: Attempt): Decision {
  const { batch, settings } = attempt;
  if (
    batch.numbers > 1 &&
    !attempt.mayHaveBeenSent &&
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
    return notSent(
      attempt,
      code,
      `${message} (still rate-limited after ${batch.deferrals} deferrals)`,
    );
  return {
    transition: {
      to: 'planned',
      nextAttemptAt: attempt.now + settings.rateLimitDelayMs,
      doubt: DOUBT.none,
      deferral: true,
      refundAttempt: true,
      statusCode: code,
      statusMsg: message,
    },
  };
}

/**
 * The provider's hours for marketing messages, not the batch's fault: it waits, uncharged and
 * without a deferral counted, however long until they come.
 */
function outsideHours({ code, message }: Rejection, { settings, now }: Attempt): Decision {
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
}

/** Halves get fresh reqIds, so a batch that may already have been sent is never split. */
function splitOrSettle(
  attempt: Attempt,
  code: string,
  splitMsg: string,
  message: string,
): Decision {
  if (attempt.batch.numbers > 1 && !attempt.mayHaveBeenSent)
    return { transition: { to: 'split', statusCode: code, statusMsg: splitMsg } };
  return notSent(attempt, code, message);
}

/** failed means "not sent": when an earlier attempt may have got through, say unknown instead. */
function notSent(attempt: Attempt, code: string | null, statusMsg: string): Decision {
  return attempt.mayHaveBeenSent
    ? {
        transition: {
          to: 'unknown',
          statusCode: code,
          statusMsg: `${statusMsg}; an earlier attempt may have been sent, so it is not resent`,
        },
      }
    : { transition: { to: 'failed', statusCode: code, statusMsg } };
}

/** Tried again after a backoff, until SMSDROP_MAX_ATTEMPTS; then the rules below it. */
function retry(attempt: Attempt, reason: string, code: string | null, doubt: Doubt): Decision {
  const { batch, settings } = attempt;
  if (batch.attempts >= settings.maxAttempts && settings.providerSilent)
    return waitOutOutage(attempt, reason, code, doubt);
  if (batch.attempts >= settings.maxAttempts && resolvableUnderReqId(attempt, doubt))
    return resolveUnderReqId(attempt, reason, code);
  if (batch.attempts >= settings.maxAttempts) {
    const why = `gave up after ${batch.attempts} attempts: ${reason}`;
    return doubt !== DOUBT.none
      ? { transition: { to: 'unknown', statusCode: code, statusMsg: why } }
      : notSent(attempt, code, why);
  }
  const delay = backoffDelay(batch.attempts, settings, attempt.random);
  return {
    transition: {
      to: 'planned',
      nextAttemptAt: attempt.now + delay,
      doubt,
      statusCode: code,
      statusMsg: reason,
    },
  };
}

function waitOutOutage(
  { batch, now }: Attempt,
  reason: string,
  code: string | null,
  doubt: Doubt,
): Decision {
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
}

/**
 * A batch that may have been accepted whole, every attempt under its reqId: while the provider
 * remembers that reqId, one more request cannot send it twice (it answers 160054, which settles
 * it as accepted), so giving up would leave `unknown` what a request can still settle. It goes
 * on, its attempts beyond SMSDROP_MAX_ATTEMPTS backed off to the largest delay, until an answer
 * settles it or the sender finds the reqId no longer safe (the provider's day is over, checked
 * before each request: whyNotUnderOwnReqId) and ends it unknown. After "may have sent some" a
 * 160054 settles nothing (which numbers?), so such a batch still ends unknown.
 */
function resolvableUnderReqId({ batch, settings }: Attempt, doubt: Doubt): boolean {
  return (
    settings.reqIdOn &&
    doubt !== DOUBT.part &&
    batch.doubt !== DOUBT.part &&
    (doubt === DOUBT.all || batch.doubt === DOUBT.all)
  );
}

function resolveUnderReqId(
  { batch, settings, now, random }: Attempt,
  reason: string,
  code: string | null,
): Decision {
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
}

function unknownWithoutReqId(code: string | null, why: string): Decision {
  return {
    transition: {
      to: 'unknown',
      statusCode: code,
      statusMsg: `${why}; not resent because reqId is off`,
    },
  };
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

/** The retry settings of the configuration. */
export function retrySettings(config: Config): RetrySettings {
  return {
    reqIdOn: config.reqId,
    maxAttempts: config.maxAttempts,
    retryBaseMs: config.retryBaseMs,
    retryMaxMs: config.retryMaxMs,
    rateLimitDelayMs: config.rateLimitDelayMs,
    rateLimitMaxDeferrals: config.rateLimitMaxDeferrals,
  };
}
