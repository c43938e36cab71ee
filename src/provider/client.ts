// The Template SMS client: one signed POST per call over a keep-alive undici Pool, and exactly one
// SendOutcome per call, never a throw. The outcome kind is what the pipeline's exactly-once
// promise rests on, so the line between "nothing sent" and "maybe sent" is drawn exactly: undici
// tells the handler (onRequestStart) when it hands the request to a connected socket, just before
// writing. Any failure before that (refused, DNS, connect timeout, TLS handshake or certificate,
// abort while queued, closed client) is 'not-sent'; any failure after it (reset, header or body
// timeout, abort, non-200, malformed body) is 'in-doubt'. Secrets never leave this module in text.
import { X509Certificate } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { rootCertificates } from 'node:tls';
import { createRequire } from 'node:module';
import type { Dispatcher, Pool as PoolType } from 'undici';

// Only the Pool: undici's index also loads fetch, WebSocket, caches and mocks (about 9 MB of
// memory this daemon never uses). undici has no "exports" map, so the path is public; it is
// pinned by package-lock.json and covered by every client test.
const Pool = createRequire(import.meta.url)('undici/lib/dispatcher/pool.js') as typeof PoolType;
import { type ConfigCode, SmsdropError } from '../errors.js';
import { redactSecrets, registerSecret } from '../log/redact.js';
import { baseUrlProblem } from '../config/settings/baseUrl.js';
import { classifyStatusCode, isKnownStatusCode } from './codes.js';
import { decodeResponse, isMalformed } from './decode.js';
import { isCertificateError } from './certificateErrors.js';
import { acceptHeader, contentType, encodeBodyBytes } from './encode.js';
import { refuseLocally } from './localRefusals.js';
import { createSigner, formatTimestamp, type RequestSignature } from './sign.js';
import type { BodyFormat, SendOptions, SendOutcome, TemplateSmsRequest } from './types.js';

export interface ProviderClientOptions {
  baseUrl: string;
  accountSid: string;
  authToken: string;
  format: BodyFormat;
  /** Numbers per request above which the client refuses (160048) without sending. */
  maxPerRequest: number;
  connectTimeoutMs: number;
  /**
   * Allowed for the response headers, and again between body chunks, once the request is written.
   */
  responseTimeoutMs: number;
  /** Extra CA (PEM file) trusted in addition to Node's default roots. */
  caFile?: string;
  /** Extra CA (PEM text) trusted in addition to Node's default roots. */
  caPem?: string;
  /** IANA zone of the signing timestamp; default the host's local zone. */
  timezone?: string;
  /** Keep-alive pool size, default 64. */
  connections?: number;
  /** Clock, for tests; called once per send. */
  now?: () => Date;
  /** Told the first time the provider answers a status code the code tables do not explain. */
  onUnknownCode?: (statusCode: string) => void;
}

export interface ProviderClient {
  send(req: TemplateSmsRequest, options?: SendOptions): Promise<SendOutcome>;
  /** Lets requests in flight finish, then closes the sockets. Safe to call twice. */
  close(): Promise<void>;
}

/**
 * A bad option, with the code of the setting it comes from (E_CONFIG_CA_FILE, say). Thrown only
 * by createProviderClient, never by send.
 */
export class ClientSetupError extends SmsdropError {}

/** Largest answer body read; a real answer is a few hundred bytes. */
const MAX_RESPONSE_BYTES = 1 << 20;

interface Setup {
  origin: string;
  pathPrefix: string;
  ca?: string[];
  connections: number;
}

/** What is the same for every request of a client: made once, not per request. */
interface Prepared {
  /** The request path up to the sig's value. */
  pathUpToSig: string;
  accept: string;
  contentType: string;
  sign: (timestamp: string) => RequestSignature;
}

function prepare(o: ProviderClientOptions, setup: Setup): Prepared {
  return {
    pathUpToSig: `${setup.pathPrefix}/2013-12-26/Accounts/${encodeURIComponent(o.accountSid)}/SMS/TemplateSMS?sig=`,
    accept: acceptHeader(o.format),
    contentType: contentType(o.format),
    sign: createSigner(o.accountSid, o.authToken),
  };
}

export function createProviderClient(o: ProviderClientOptions): ProviderClient {
  const setup = checkOptions(o);
  registerSecret(o.authToken); // from now on every log line masks it
  const pool = new Pool(setup.origin, {
    connections: setup.connections,
    connect: {
      timeout: o.connectTimeoutMs,
      rejectUnauthorized: true,
      ...(setup.ca ? { ca: setup.ca } : {}),
    },
    headersTimeout: o.responseTimeoutMs,
    bodyTimeout: o.responseTimeoutMs,
  });
  const now = o.now ?? (() => new Date());
  const prepared = prepare(o, setup);
  const noticeUnknown = unknownCodeNotice(o.onUnknownCode);
  let closing: Promise<void> | undefined;
  return {
    send: (req, options) =>
      sendSafely(pool, o, prepared, now, req, options ?? {}).then(noticeUnknown),
    close: () => (closing ??= pool.close().catch(() => undefined)),
  };
}

/** Passes outcomes through, telling `tell` once per status code the tables do not explain. */
function unknownCodeNotice(
  tell: ((statusCode: string) => void) | undefined,
): (outcome: SendOutcome) => SendOutcome {
  const told = new Set<string>();
  return (outcome) => {
    if (
      tell &&
      outcome.kind === 'rejected' &&
      !outcome.local &&
      !told.has(outcome.statusCode) &&
      !isKnownStatusCode(outcome.statusCode)
    ) {
      told.add(outcome.statusCode);
      tell(outcome.statusCode);
    }
    return outcome;
  };
}

// ---------------------------------------------------------------------------------------------
// Options

const fail = (message: string, code: ConfigCode): never => {
  throw new ClientSetupError(code, message);
};

const shown = (v: unknown) => `\`${String(v)}\` (${typeof v})`;

function checkOptions(o: ProviderClientOptions): Setup {
  if (typeof o.accountSid !== 'string' || o.accountSid === '')
    fail('Expected `accountSid` to be a non-empty string', 'E_CONFIG_ACCOUNT_SID');
  if (typeof o.authToken !== 'string' || o.authToken === '')
    fail('Expected `authToken` to be a non-empty string', 'E_CONFIG_AUTH_TOKEN');
  if (o.format !== 'json' && o.format !== 'xml')
    fail(`Expected \`format\` to be json or xml, got ${shown(o.format)}`, 'E_CONFIG_FORMAT');
  requirePositive('maxPerRequest', o.maxPerRequest, true, 'E_CONFIG_MAX_PER_REQUEST');
  requirePositive('connectTimeoutMs', o.connectTimeoutMs, false, 'E_CONFIG_CONNECT_TIMEOUT_MS');
  requirePositive('responseTimeoutMs', o.responseTimeoutMs, false, 'E_CONFIG_RESPONSE_TIMEOUT_MS');
  const connections = o.connections ?? 64;
  requirePositive('connections', connections, true, 'E_CONFIG_CONCURRENCY');
  if (o.timezone !== undefined) checkTimeZone(o.timezone);
  const url = checkBaseUrl(o.baseUrl);
  const extra = [
    ...(o.caFile !== undefined ? [readCaFile(o.caFile)] : []),
    ...(o.caPem !== undefined ? [checkPem(o.caPem, 'caPem')] : []),
  ];
  return {
    origin: url.origin,
    pathPrefix: url.pathname.replace(/\/+$/, ''),
    connections,
    // Added to Node's default roots, never instead of them: the real provider keeps working.
    ...(extra.length > 0 ? { ca: [...rootCertificates, ...extra] } : {}),
  };
}

function requirePositive(name: string, v: unknown, whole: boolean, code: ConfigCode): void {
  const ok =
    typeof v === 'number' && Number.isFinite(v) && v > 0 && (!whole || Number.isInteger(v));
  if (!ok)
    fail(
      `Expected \`${name}\` to be a positive ${whole ? 'whole' : 'finite'} number, got ${shown(v)}`,
      code,
    );
}

function checkTimeZone(tz: string): void {
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: tz });
  } catch {
    fail(
      `Expected \`timezone\` to be an IANA time zone such as Asia/Shanghai, got ${shown(tz)}`,
      'E_CONFIG_TIMEZONE',
    );
  }
}

function checkBaseUrl(baseUrl: string): URL {
  const problem = baseUrlProblem(baseUrl);
  if (problem) fail(`baseUrl: ${problem}`, 'E_CONFIG_BASE_URL');
  return new URL(baseUrl);
}

function readCaFile(file: string): string {
  let pem: string;
  try {
    pem = readFileSync(file, 'utf8');
  } catch (err) {
    return fail(
      `cannot read the CA file ${file} (SMSDROP_CA_FILE): ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`,
      'E_CONFIG_CA_FILE',
    );
  }
  return checkPem(pem, `CA file ${file}`);
}

function checkPem(pem: string, what: string): string {
  if (!pem.includes('-----BEGIN CERTIFICATE-----') || !parsesAsCertificate(pem))
    fail(`${what} does not hold a PEM certificate`, 'E_CONFIG_CA_FILE');
  return pem;
}

function parsesAsCertificate(pem: string): boolean {
  try {
    new X509Certificate(pem);
    return true;
  } catch {
    return false;
  }
}

// ---------------------------------------------------------------------------------------------
// Sending

async function sendSafely(
  pool: PoolType,
  o: ProviderClientOptions,
  prepared: Prepared,
  now: () => Date,
  req: TemplateSmsRequest,
  { signal, mayStart }: SendOptions,
): Promise<SendOutcome> {
  const secrets = [o.authToken];
  try {
    const refusal = refuseLocally(req, o.maxPerRequest, o.format);
    if (refusal)
      return {
        kind: 'rejected',
        codeClass: classifyStatusCode(refusal.statusCode),
        local: true,
        ...refusal,
      };
    if (signal?.aborted) return { kind: 'not-sent', reason: 'aborted before sending' };
    const { sig, authorization } = prepared.sign(formatTimestamp(now(), o.timezone));
    secrets.push(sig, authorization);
    const body = encodeBodyBytes(req, o.format);
    const result = await exchange(
      pool,
      {
        method: 'POST',
        path: prepared.pathUpToSig + sig,
        headers: {
          accept: prepared.accept,
          'content-type': prepared.contentType,
          'content-length': String(body.length),
          authorization,
        },
        body,
      },
      { signal, mayStart },
    );
    return toOutcome(result, o.format, secrets);
  } catch (err) {
    // Unreachable by design; if it happens we cannot know whether anything was written.
    return { kind: 'in-doubt', reason: scrub(`client error: ${describeError(err)}`, secrets) };
  }
}

type Exchange =
  | { kind: 'answer'; status: number; body: string }
  | { kind: 'failed'; written: boolean; error: unknown };

/** The reason undici is given for an abort; told only inside an outcome's reason. */
class AbortedError extends SmsdropError {
  constructor(message: string) {
    super('E_ABORTED', message);
  }
}

/** Why a request the caller's mayStart stopped was not sent. */
const FENCED = 'not sent: its batch may no longer start here (its lease is running out)';

/** One dispatch, settled once. `written` turns true when undici hands the request to a socket. */
function exchange(
  pool: PoolType,
  opts: Dispatcher.DispatchOptions,
  { signal, mayStart }: SendOptions,
): Promise<Exchange> {
  return new Promise((resolve) => {
    let written = false;
    let settled = false;
    let controller: Dispatcher.DispatchController | undefined;
    let status = 0;
    let size = 0;
    const chunks: Buffer[] = [];
    const finish = (r: Exchange) => {
      if (settled) return;
      settled = true;
      signal?.removeEventListener('abort', onAbort);
      resolve(r);
    };
    // Still queued: answer now; onRequestStart drops the request when it reaches a socket.
    const onAbort = () =>
      written
        ? controller?.abort(new AbortedError('aborted after the request was written'))
        : finish({ kind: 'failed', written, error: new AbortedError('aborted before sending') });
    signal?.addEventListener('abort', onAbort, { once: true });
    const handler: Dispatcher.DispatchHandler = {
      onRequestStart(c) {
        controller = c;
        if (settled) return c.abort(new AbortedError('aborted before sending'));
        if (mayStart?.() === false) {
          finish({ kind: 'failed', written, error: new AbortedError(FENCED) });
          return c.abort(new AbortedError(FENCED));
        }
        written = true;
      },
      onResponseStart(_c, statusCode) {
        status = statusCode;
      },
      onResponseData(c, chunk) {
        size += chunk.length;
        if (size > MAX_RESPONSE_BYTES)
          return c.abort(new AbortedError(`answer larger than ${MAX_RESPONSE_BYTES} bytes`));
        chunks.push(chunk);
      },
      onResponseEnd() {
        finish({ kind: 'answer', status, body: Buffer.concat(chunks).toString('utf8') });
      },
      onResponseError(_c, error) {
        finish({ kind: 'failed', written, error });
      },
    };
    try {
      pool.dispatch(opts, handler);
    } catch (error) {
      finish({ kind: 'failed', written, error });
    }
  });
}

function toOutcome(r: Exchange, format: BodyFormat, secrets: string[]): SendOutcome {
  if (r.kind === 'failed') {
    const reason = scrub(describeError(r.error), secrets);
    if (r.written)
      return { kind: 'in-doubt', reason: `request written, no complete answer: ${reason}` };
    if (r.error instanceof AbortedError && r.error.message === FENCED)
      return { kind: 'not-sent', reason, fenced: true };
    return isCertificateError(r.error)
      ? { kind: 'not-sent', reason, code: 'E_PROVIDER_TLS' }
      : { kind: 'not-sent', reason };
  }
  if (r.status !== 200)
    return { kind: 'in-doubt', reason: `HTTP ${r.status} answer`, httpStatus: r.status };
  const decoded = decodeResponse(r.body, format);
  if (isMalformed(decoded))
    return { kind: 'in-doubt', reason: `malformed answer: ${decoded.why}`, httpStatus: 200 };
  if (decoded.statusCode === '000000') {
    return {
      kind: 'accepted',
      statusCode: '000000',
      smsMessageSid: decoded.smsMessageSid ?? '',
      dateCreated: decoded.dateCreated ?? '',
    };
  }
  // a code is never a secret, but an echoing server could make it one
  const statusCode = scrub(decoded.statusCode, secrets);
  const outcome: SendOutcome = {
    kind: 'rejected',
    statusCode,
    codeClass: classifyStatusCode(statusCode),
  };
  if (decoded.statusMsg !== undefined) outcome.statusMsg = scrub(decoded.statusMsg, secrets);
  return outcome;
}

/** "ECONNREFUSED: connect ECONNREFUSED 127.0.0.1:9" and the cause's code when there is one. */
function describeError(err: unknown): string {
  if (!(err instanceof Error)) return String(err);
  const code = (err as NodeJS.ErrnoException).code;
  const cause = err.cause instanceof Error ? ` (cause: ${describeError(err.cause)})` : '';
  return `${code ? `${code}: ` : ''}${(err.message || err.name).trim()}${cause}`;
}

/** Removes the token, this request's sig and Authorization value, and any ?sig= from text. */
function scrub(text: string, secrets: string[]): string {
  let out = redactSecrets(text);
  for (const s of secrets) if (s) out = out.split(s).join('***');
  return out;
}
