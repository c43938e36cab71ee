// Whether a batch that may already have reached the provider can go again under its own reqId: the
// provider refuses a repeat of a reqId (160054) only for one natural day, so a resend is safe only
// while that day lasts and every attempt carried that reqId.
import type { AttemptHistory } from '../ports/records.js';

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
