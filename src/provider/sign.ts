// Request signing: every request carries a sig query parameter and an Authorization header, both
// derived from the same yyyyMMddHHmmss timestamp, which is valid for 24 hours. Sign each request
// afresh: a timestamp computed once per process goes stale in a long-running daemon.
import { createHash } from 'node:crypto';
import { wallClockFormatter } from '../log/time.js';

export interface RequestSignature {
  /** Uppercase hex MD5 of accountSid + authToken + timestamp (lowercase is refused). */
  sig: string;
  /** Base64 of `accountSid:timestamp`, no scheme prefix. */
  authorization: string;
}

// The same second formats the same way: at hundreds of requests a second, format each second once.
let lastSecond = NaN;
let lastZone: string | undefined;
let lastText = '';

/** yyyyMMddHHmmss of `date` in the IANA zone `timeZone` (default: the host's local zone). */
export function formatTimestamp(date: Date, timeZone?: string): string {
  const second = Math.floor(date.getTime() / 1000);
  if (second === lastSecond && timeZone === lastZone) return lastText;
  lastText = formatUncached(date, timeZone);
  lastSecond = second;
  lastZone = timeZone;
  return lastText;
}

function formatUncached(date: Date, timeZone?: string): string {
  const parts: Record<string, string> = {};
  for (const p of wallClockFormatter(timeZone).formatToParts(date)) parts[p.type] = p.value;
  const two = (v: string | undefined) => (v ?? '').padStart(2, '0');
  return `${(parts.year ?? '').padStart(4, '0')}${two(parts.month)}${two(parts.day)}${two(parts.hour)}${two(parts.minute)}${two(parts.second)}`;
}

/**
 * signRequest for one account, remembering the last timestamp's signature: at hundreds of requests
 * a second most requests share their second with the one before, and get the same sig without
 * hashing again. Each client holds its own.
 */
export function createSigner(
  accountSid: string,
  authToken: string,
): (timestamp: string) => RequestSignature {
  let lastTimestamp = '';
  let last: RequestSignature | undefined;
  return (timestamp) => {
    if (last === undefined || timestamp !== lastTimestamp) {
      last = signRequest(accountSid, authToken, timestamp);
      lastTimestamp = timestamp;
    }
    return last;
  };
}

/** The sig and Authorization value of one request; pass the same timestamp to both uses. */
export function signRequest(
  accountSid: string,
  authToken: string,
  timestamp: string,
): RequestSignature {
  const sig = createHash('md5')
    .update(accountSid + authToken + timestamp, 'utf8')
    .digest('hex')
    .toUpperCase();
  const authorization = Buffer.from(`${accountSid}:${timestamp}`, 'utf8').toString('base64');
  return { sig, authorization };
}
