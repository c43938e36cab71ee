// The HTTP API's writes: POST /api/files/ID/{approve,pause,resume,cancel}, an operator's command
// on a file (ports/control.ts), as `smsdrop approve|pause|resume|cancel` gives it. A write needs
// the bearer token, whatever the address: without SMSDROP_HTTP_TOKEN every write is refused (a
// page on another site could otherwise post to a loopback daemon through the operator's browser).
// The token travels in the Authorization header, which a page of another origin cannot set
// without a CORS preflight that this server never grants; so do an Origin or Sec-Fetch-Site header
// naming another site, and a body other than application/json (what a plain form cannot send).
import type { IncomingMessage } from 'node:http';
import { SmsdropError } from '../errors.js';
import {
  type ControlAction,
  type ControlResult,
  type ControlStore,
  waitingFor,
} from '../ports/control.js';
import { authorized } from './address.js';

/** Where the commands go and who hears of them. */
export interface ControlSource {
  control: ControlStore;
  token: string | undefined;
  /** SMSDROP_HTTP_HOSTS: names a reverse proxy serves the dashboard under, as pages' origins. */
  hosts: readonly string[];
  /** One line per command: who asked, from where, what it did (never the token). */
  log: { info(message: string, meta?: Record<string, unknown>): unknown };
}

/** A write's route: the file's id and the action; undefined: not a write's path. */
export function controlRoute(route: string): { id: number; action: ControlAction } | undefined {
  const m = /^\/api\/files\/(\d+)\/(approve|pause|resume|cancel)$/.exec(route);
  return m ? { id: Number(m[1]), action: m[2] as ControlAction } : undefined;
}

type Answer = (status: number, body: unknown, headers?: Record<string, string>) => void;

/** A body bigger than this is no command (`{"at": "…"}` is some 40 bytes). */
const MOST_BODY_BYTES = 4096;
const WITH_OFFSET = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:?\d{2})$/i;

/** Answers a POST to a write's route (see the top). */
export async function handleControl(
  req: IncomingMessage,
  answer: Answer,
  source: ControlSource,
  target: { id: number; action: ControlAction },
): Promise<void> {
  const refusal = refused(req, source);
  if (refusal) return answer(refusal.status, { error: refusal.error }, refusal.headers);
  const body = await readBody(req);
  const at = body.ok ? startTime(body.value, target.action) : body;
  if (!at.ok) return answer(400, { code: 'E_USAGE', message: at.error });
  const { id, action } = target;
  if (!(await source.control.control(id)))
    return answer(404, { code: 'E_USAGE', message: `no file ${id} in the journal` });
  try {
    const result = await source.control.command(id, {
      action,
      by: 'api',
      ...(at.value === undefined ? {} : { at: at.value }),
    });
    source.log.info(
      `${result.name} (id ${id}): ${action} by api from ${remoteOf(req)}: ${outcomeOf(result, action)}`,
      { event: 'file-control', file: id, action, by: 'api', remote: remoteOf(req) },
    );
    return answer(200, {
      id,
      name: result.name,
      control: result.control,
      start_at: result.startAt,
      waiting: waitingFor(result, Date.now()) ?? null,
      changed: result.changed,
      cancelled: result.cancelled,
    });
  } catch (err) {
    if (err instanceof SmsdropError && err.code === 'E_CONTROL_REFUSED') {
      source.log.info(
        `${action} of file ${id} by api from ${remoteOf(req)} refused: ${err.message}`,
        {
          event: 'file-control-refused',
          file: id,
          action,
          by: 'api',
        },
      );
      return answer(409, { code: err.code, message: err.message });
    }
    // no such file after all: it went between the look above and the command
    if (err instanceof SmsdropError && err.code === 'E_USAGE')
      return answer(404, { code: err.code, message: err.message });
    throw err;
  }
}

/** What the command did, for the log line. */
function outcomeOf(result: ControlResult, action: ControlAction): string {
  if (!result.changed) return 'nothing changed';
  const now = result.control ?? (result.startAt ? `scheduled at ${result.startAt}` : 'going');
  return action === 'cancel' ? `${now}, ${result.cancelled} numbers cancelled` : now;
}

/** Why the request may not write, or undefined: it may. */
function refused(
  req: IncomingMessage,
  { token, hosts }: Pick<ControlSource, 'token' | 'hosts'>,
): { status: number; error: string; headers?: Record<string, string> } | undefined {
  if (!token)
    return {
      status: 403,
      error: 'writes need SMSDROP_HTTP_TOKEN: set it and send it as Authorization: Bearer TOKEN',
    };
  if (crossSite(req, hosts))
    return { status: 403, error: 'refused: the request comes from a page of another site' };
  if (!authorized(req.headers.authorization, token))
    return {
      status: 401,
      error: 'a bearer token is required (Authorization: Bearer SMSDROP_HTTP_TOKEN)',
      headers: { 'WWW-Authenticate': 'Bearer' },
    };
  const type = (req.headers['content-type'] ?? '').split(';')[0]!.trim().toLowerCase();
  if (type !== 'application/json')
    return { status: 415, error: 'send Content-Type: application/json (the body may be empty)' };
  return undefined;
}

/**
 * The browser says the request comes from a page of another origin: Origin names another host
 * than the one asked and none of `hosts` (a proxy may pass on a Host of its own), or is "null" (a
 * sandboxed or file: page), or Sec-Fetch-Site says so.
 */
function crossSite(req: IncomingMessage, hosts: readonly string[]): boolean {
  const site = req.headers['sec-fetch-site'];
  if (site !== undefined && site !== 'same-origin' && site !== 'none') return true;
  const origin = req.headers.origin;
  if (origin === undefined) return false; // not a browser's request (curl, a script)
  try {
    const { protocol, host, hostname } = new URL(origin);
    if (protocol !== 'http:' && protocol !== 'https:') return true;
    const named = (name: string) => name.replace(/^\[|\]$/g, '').toLowerCase();
    return host !== req.headers.host && !hosts.some((h) => named(h) === named(hostname));
  } catch {
    return true;
  }
}

type Parsed<T> = { ok: true; value: T } | { ok: false; error: string };

/** The JSON body: an object, or none (an empty body). */
async function readBody(req: IncomingMessage): Promise<Parsed<Record<string, unknown>>> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > MOST_BODY_BYTES) return { ok: false, error: 'the body is too big for a command' };
    chunks.push(chunk);
  }
  const text = Buffer.concat(chunks).toString('utf8').trim();
  if (text === '') return { ok: true, value: {} };
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return { ok: false, error: 'the body is not JSON' };
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    return { ok: false, error: 'the body is not a JSON object' };
  return { ok: true, value: value as Record<string, unknown> };
}

/** approve's `at` as the journal keeps it (UTC, ISO 8601); other actions take no field. */
function startTime(
  body: Record<string, unknown>,
  action: ControlAction,
): Parsed<string | undefined> {
  const fields = Object.keys(body);
  const allowed = action === 'approve' ? ['at'] : [];
  const unknown = fields.filter((f) => !allowed.includes(f));
  if (unknown.length > 0)
    return {
      ok: false,
      error: `${action} takes ${action === 'approve' ? 'only "at"' : 'no field'}: not ${unknown.map((f) => JSON.stringify(f)).join(', ')}`,
    };
  const at = body.at;
  if (at === undefined || at === null) return { ok: true, value: undefined };
  const moment =
    typeof at === 'string' && WITH_OFFSET.test(at.trim()) ? new Date(at.trim()) : undefined;
  if (!moment || Number.isNaN(moment.getTime()))
    return {
      ok: false,
      error: `"at": ${JSON.stringify(at).slice(0, 60)} is not a time: write ISO 8601 with its offset (2026-12-07T09:00+08:00)`,
    };
  return { ok: true, value: moment.toISOString() };
}

function remoteOf(req: IncomingMessage): string {
  return req.socket.remoteAddress ?? 'an unknown address';
}
