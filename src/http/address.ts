// Where the daemon's HTTP surface listens (SMSDROP_HTTP) and who may read it: anyone on a
// loopback address; elsewhere only a request with the bearer token (SMSDROP_HTTP_TOKEN), compared
// in constant time so that its length and prefix cannot be guessed from response times. Without a
// token, a request must name a loopback host (or one of SMSDROP_HTTP_HOSTS) in its Host header: a
// web page the operator opens could otherwise read the surface through a name of its own that it
// points at 127.0.0.1 (DNS rebinding), since the browser sees one origin.
import { createHash, timingSafeEqual } from 'node:crypto';
import { SmsdropError } from '../errors.js';
import { isLoopbackHost } from '../config/settings/baseUrl.js';
import type { HttpAddress } from '../config/settings/httpAddress.js';

/** A set-up mistake of the HTTP surface: the daemon does not start (exit 2, one line). */
export class HttpSetupError extends SmsdropError {}

/** A non-loopback address without a token would show every file's figures to the network. */
export function checkHttpAccess(address: HttpAddress, token: string | undefined): void {
  if (address.host === undefined || isLoopbackHost(address.host) || token) return;
  throw new HttpSetupError(
    'E_CONFIG_HTTP',
    `SMSDROP_HTTP=${address.text} is not a loopback address: set SMSDROP_HTTP_TOKEN (a bearer token every request must carry), or listen on 127.0.0.1`,
  );
}

/** The Authorization header carries the token (always true without one). */
export function authorized(header: string | undefined, token: string | undefined): boolean {
  if (!token) return true;
  const given = /^Bearer\s+(.+)$/i.exec(header ?? '')?.[1]?.trim() ?? '';
  // Hashed first: timingSafeEqual needs equal lengths, and the hashes always are.
  const digest = (s: string) => createHash('sha256').update(s).digest();
  return timingSafeEqual(digest(given), digest(token));
}

/**
 * The Host header names a loopback host or one of `extra` (names, compared without case). A
 * missing or malformed header is refused: every browser sends one.
 */
export function hostAllowed(header: string | undefined, extra: readonly string[]): boolean {
  if (!header) return false;
  let hostname: string;
  try {
    hostname = new URL(`http://${header}`).hostname;
  } catch {
    return false;
  }
  if (isLoopbackHost(hostname)) return true;
  const bare = hostname.replace(/^\[|\]$/g, '').toLowerCase();
  return extra.some((name) => name.replace(/^\[|\]$/g, '').toLowerCase() === bare);
}

/** SMSDROP_HTTP_HOSTS as a list (empty when unset). */
export function hostList(text: string | undefined): string[] {
  return (text ?? '')
    .split(',')
    .map((name) => name.trim())
    .filter((name) => name !== '');
}
