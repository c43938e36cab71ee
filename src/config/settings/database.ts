// The PostgreSQL journal's settings (SMSDROP_DATABASE_URL and SMSDROP_LEASE): checked when the
// configuration is read, so that a bad one stops start-up with one line naming the setting.
//
// TLS follows the project's rule for HTTPS: verified, and plain only to loopback. smsdrop chooses
// it, not the URL: to any host but loopback, TLS with the certificate checked against Node's roots
// or SMSDROP_DATABASE_CA; to loopback (or a Unix socket), plain unless a CA is given. The URL's
// own TLS parameters are refused, because node-postgres would let them override that choice
// (`sslmode=require` checks nothing there, and `sslrootcert` is read as a file while parsing).
// The password never shows: `shown` is what a log or an error may print.
import { parseDurationOrOff, UNIT_MS, type WrittenDuration } from '../../log/duration.js';
import { isLoopbackHost } from './baseUrl.js';

export interface DatabaseUrl {
  /** As written, with its password: only for the connection itself. */
  url: string;
  /** The URL with its password hidden. */
  shown: string;
  /** Loopback or a Unix socket: plain connections are allowed. */
  local: boolean;
  /** sslmode=verify-full in the URL: TLS even to loopback. */
  tls: boolean;
}

const TLS_ADVICE =
  'smsdrop always uses verified TLS to a host other than loopback (a private CA: SMSDROP_DATABASE_CA)';

/** A postgres:// URL, or the reason it cannot be used (without its password). */
export function parseDatabaseUrl(text: string): DatabaseUrl | string {
  let url: URL;
  try {
    url = new URL(text.trim());
  } catch {
    return 'expected a URL such as postgres://smsdrop@db.example.com/smsdrop';
  }
  if (url.protocol !== 'postgres:' && url.protocol !== 'postgresql:')
    return `expected a postgres:// or postgresql:// URL, not ${url.protocol}`;
  const host = url.searchParams.get('host') ?? url.hostname;
  const local = host === '' || host.startsWith('/') || isLoopbackHost(host);
  let tls = false;
  for (const key of url.searchParams.keys()) {
    if (!/^ssl|^uselibpqcompat$/i.test(key)) continue;
    const mode = key === 'sslmode' ? url.searchParams.get(key) : undefined;
    if (mode === 'verify-full') tls = true;
    else if (mode === 'disable' && local) continue;
    else if (mode === 'disable')
      return `plain connections are allowed only to a loopback host, not ${host}: leave sslmode out (${TLS_ADVICE})`;
    else return `leave ${key}${mode ? `=${mode}` : ''} out of the URL: ${TLS_ADVICE}`;
  }
  return { url: text.trim(), shown: hidePassword(text.trim()), local, tls };
}

/**
 * The URL with its password hidden, wherever it is written (user info, a password= parameter);
 * text that is no URL is hidden from the scheme to the last @.
 */
export function hidePassword(text: string): string {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return text.replace(/^([a-z][a-z0-9+.-]*:[\\/]*)?.*@/is, '$1(hidden)@');
  }
  if (url.password) url.password = 'hidden';
  if (url.searchParams.has('password')) url.searchParams.set('password', 'hidden');
  return url
    .toString()
    .replace(/:hidden@/, ':(hidden)@')
    .replace(/password=hidden/, 'password=(hidden)');
}

/** The shortest and longest lease: renewed every few seconds; a dead node's work back in 1h. */
const LEASE_MIN_MS = 2 * UNIT_MS.s;
const LEASE_MAX_MS = UNIT_MS.h;

/** "30s", "2m" (s, m or h): how long a silent node's claims last. */
export function parseLease(text: string): WrittenDuration | string {
  const lease = parseDurationOrOff(text);
  const expected = 'expected a duration from 2s to 1h, such as 30s or 2m';
  if (!lease || lease.ms < LEASE_MIN_MS || lease.ms > LEASE_MAX_MS) return expected;
  return lease;
}
