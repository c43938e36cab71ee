// The provider's URL and credential checks, in the order the real service reports them. Written
// independently of the client's signing code on purpose: a signing bug must not hide in shared
// code.
import { createHash } from 'node:crypto';
import { parseStamp } from './clock.js';
import { remembering } from './memo.js';

const SMS_PATH = /^\/2013-12-26\/Accounts\/([^/]+)\/SMS\/TemplateSMS$/;
// The URL every client sends, read without the WHATWG parser: letters and digits only, so the
// parser would neither re-encode nor normalise anything in it, and `sig` would come back exactly as
// written.
const PLAIN_SMS_URL =
  /^\/2013-12-26\/Accounts\/([A-Za-z0-9]+)\/SMS\/TemplateSMS(?:\?sig=([A-Za-z0-9]*))?$/;
const DAY_MS = 24 * 60 * 60 * 1000;
const BASE64 = /^[A-Za-z0-9+/]+={0,2}$/;
const SID_AND_STAMP = /^([^:]*):([^:]*)$/;
const strictUtf8 = new TextDecoder('utf-8', { fatal: true });

export interface SmsTarget {
  accountSid: string;
  /** The sig query parameter; undefined when absent. */
  sig: string | undefined;
}

/** The account and sig of a Template SMS URL, or undefined when the path is not that operation. */
export function parseSmsUrl(rawUrl: string): SmsTarget | undefined {
  const plain = PLAIN_SMS_URL.exec(rawUrl);
  if (plain) return { accountSid: plain[1]!, sig: plain[2] };
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

/** Results kept per text: a sender signs once per second, so requests repeat these texts. */
const TEXTS_REMEMBERED = 256;

/** Strict Base64: the alphabet, correct padding, and a canonical encoding of valid UTF-8. */
const decodeBase64 = remembering((text: string): string | undefined => {
  if (text.length === 0 || text.length % 4 !== 0 || !BASE64.test(text)) return undefined;
  const bytes = Buffer.from(text, 'base64');
  if (bytes.toString('base64') !== text) return undefined;
  try {
    return strictUtf8.decode(bytes);
  } catch {
    return undefined;
  }
}, TEXTS_REMEMBERED);

/** The uppercase MD5 hex digest of sid + token + stamp. */
const md5Upper = remembering(
  (text: string) => createHash('md5').update(text, 'utf8').digest('hex').toUpperCase(),
  TEXTS_REMEMBERED,
);

/** The failing status code, or undefined when the request is authentic. */
export function checkAuth(input: AuthInput, account: Account): string | undefined {
  const { target, authorization } = input;
  if (target.accountSid !== account.accountSid) return '111141';
  if (!authorization) return '111101';
  const decoded = decodeBase64(authorization);
  if (decoded === undefined) return '111102';
  const shape = SID_AND_STAMP.exec(decoded);
  if (!shape) return '111103';
  const [, sid = '', stamp = ''] = shape;
  if (sid === '') return '111104';
  if (stamp === '') return '111105';
  if (sid !== target.accountSid) return '111107';
  const signedAt = parseStamp(stamp, input.timeZone);
  if (signedAt === undefined) return '111113';
  if (Math.abs(input.now.getTime() - signedAt) > DAY_MS) return '111106';
  if (!target.sig) return '111108';
  const expected = md5Upper(account.accountSid + account.authToken + stamp);
  // A lowercase digest is refused even when it is otherwise right: the spec forbids it.
  if (target.sig !== expected) return '111109';
  return undefined;
}
