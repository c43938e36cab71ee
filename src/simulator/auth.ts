// The provider's URL and credential checks, in the order the real service reports them. Written
// independently of the client's signing code on purpose: a signing bug must not hide in shared code.
import { createHash } from 'node:crypto';
import { parseStamp } from './clock.js';

const SMS_PATH = /^\/2013-12-26\/Accounts\/([^/]+)\/SMS\/TemplateSMS$/;
const DAY_MS = 24 * 60 * 60 * 1000;

export interface SmsTarget {
  accountSid: string;
  /** The sig query parameter; undefined when absent. */
  sig: string | undefined;
}

/** The account and sig of a Template SMS URL, or undefined when the path is not that operation. */
export function parseSmsUrl(rawUrl: string): SmsTarget | undefined {
  const url = new URL(rawUrl, 'http://simulator.invalid');
  const m = SMS_PATH.exec(url.pathname);
  if (!m) return undefined;
  return { accountSid: m[1] ?? '', sig: url.searchParams.get('sig') ?? undefined };
}

export interface Account {
  accountSid: string;
  authToken: string;
}

export interface AuthInput {
  target: SmsTarget;
  authorization: string | undefined;
  now: Date;
  timeZone: string | undefined;
}

/** Strict Base64: the alphabet, correct padding, and a canonical encoding of valid UTF-8. */
function decodeBase64(text: string): string | undefined {
  if (text.length === 0 || text.length % 4 !== 0 || !/^[A-Za-z0-9+/]+={0,2}$/.test(text)) return undefined;
  const bytes = Buffer.from(text, 'base64');
  if (bytes.toString('base64') !== text) return undefined;
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch {
    return undefined;
  }
}

/** The failing status code, or undefined when the request is authentic. */
export function checkAuth(input: AuthInput, account: Account): string | undefined {
  const { target, authorization } = input;
  if (target.accountSid !== account.accountSid) return '111141';
  if (!authorization) return '111101';
  const decoded = decodeBase64(authorization);
  if (decoded === undefined) return '111102';
  const shape = /^([^:]+):([^:]+)$/.exec(decoded);
  if (!shape) return '111103';
  const [, sid = '', stamp = ''] = shape;
  if (sid !== target.accountSid) return '111107';
  const signedAt = parseStamp(stamp, input.timeZone);
  if (signedAt === undefined) return '111113';
  if (Math.abs(input.now.getTime() - signedAt) > DAY_MS) return '111106';
  if (!target.sig) return '111108';
  const expected = createHash('md5').update(account.accountSid + account.authToken + stamp, 'utf8').digest('hex').toUpperCase();
  // A lowercase digest is refused even when it is otherwise right: the spec forbids it.
  if (target.sig !== expected) return '111109';
  return undefined;
}
