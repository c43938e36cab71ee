// Test helpers: requests built by hand (own MD5, own Base64, own bodies) so that the simulator is
// checked against the spec, not against the client's code. Stamps are computed from UTC by hand.
import { createHash } from 'node:crypto';
import net from 'node:net';
import { request, type Dispatcher } from 'undici';
import {
  startSimulator,
  type RunningSimulator,
  type SimulatorOptions,
} from '../../src/simulator/index.js';

export const SID = 'aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa1';
export const TOKEN = 'tttttttttttttttttttttttttttttt01';
export const APP = 'app00000000000000000000000000001';
/** The simulator's clock in most tests: 2024-05-01 12:00:00 UTC. */
export const NOON = new Date('2024-05-01T12:00:00Z');

/** yyyyMMddHHmmss of `d` as read on a clock `offsetHours` ahead of UTC. */
export function stampAt(d: Date, offsetHours = 0): string {
  return new Date(d.getTime() + offsetHours * 3_600_000)
    .toISOString()
    .replace(/[-:T]/g, '')
    .slice(0, 14);
}

export function sigOf(stamp: string, sid = SID, token = TOKEN): string {
  return createHash('md5')
    .update(sid + token + stamp)
    .digest('hex')
    .toUpperCase();
}

export function authOf(stamp: string, sid = SID): string {
  return Buffer.from(`${sid}:${stamp}`).toString('base64');
}

export interface Payload {
  to: string;
  appId?: string;
  templateId?: string;
  datas?: string[];
  reqId?: string;
}

const esc = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

export function jsonBody(p: Payload): string {
  return JSON.stringify({
    to: p.to,
    appId: p.appId ?? APP,
    templateId: p.templateId ?? '1',
    datas: p.datas ?? ['a', 'b'],
    ...(p.reqId === undefined ? {} : { reqId: p.reqId }),
  });
}

export function xmlBody(p: Payload): string {
  const datas = (p.datas ?? ['a', 'b']).map((d) => `<data>${esc(d)}</data>`).join('');
  const reqId = p.reqId === undefined ? '' : `<reqId>${esc(p.reqId)}</reqId>`;
  return `<?xml version="1.0" encoding="UTF-8"?><TemplateSMS><to>${esc(p.to)}</to><appId>${esc(p.appId ?? APP)}</appId><templateId>${esc(p.templateId ?? '1')}</templateId><datas>${datas}</datas>${reqId}</TemplateSMS>`;
}

export interface Call {
  format?: 'json' | 'xml';
  payload?: Payload;
  /** Raw body; overrides payload. */
  body?: string;
  stamp?: string;
  sid?: string;
  /** null: header left out. */
  authorization?: string | null;
  sig?: string | null;
  accept?: string;
  contentType?: string;
  path?: string;
  method?: 'POST' | 'GET';
  dispatcher?: Dispatcher;
}

export interface Answer {
  status: number;
  contentType: string;
  text: string;
  /** statusCode from a JSON or XML body, '' when there is none. */
  code: string;
}

export function codeIn(text: string): string {
  const json = /"statusCode":"(\d{6})"/.exec(text);
  const xml = /<statusCode>(\d{6})<\/statusCode>/.exec(text);
  return json?.[1] ?? xml?.[1] ?? '';
}

/** A signed request, valid unless the call says otherwise. The clock defaults to NOON. */
export function buildCall(c: Call = {}): {
  path: string;
  headers: Record<string, string>;
  body: string;
} {
  const format = c.format ?? 'json';
  const stamp = c.stamp ?? stampAt(NOON);
  const sid = c.sid ?? SID;
  const sig = c.sig === undefined ? sigOf(stamp) : c.sig;
  const path =
    c.path ?? `/2013-12-26/Accounts/${sid}/SMS/TemplateSMS${sig === null ? '' : `?sig=${sig}`}`;
  const headers: Record<string, string> = {
    accept: c.accept ?? `application/${format}`,
    'content-type': c.contentType ?? `application/${format};charset=utf-8`,
  };
  const authorization = c.authorization === undefined ? authOf(stamp, sid) : c.authorization;
  if (authorization !== null) headers.authorization = authorization;
  const payload = c.payload ?? { to: '13800000001' };
  const body = c.body ?? (format === 'json' ? jsonBody(payload) : xmlBody(payload));
  return { path, headers, body };
}

export async function call(sim: RunningSimulator, c: Call = {}): Promise<Answer> {
  const { path, headers, body } = buildCall(c);
  const method = c.method ?? 'POST';
  const res = await request(sim.url + path, {
    method,
    headers,
    body: method === 'POST' ? body : undefined,
    dispatcher: c.dispatcher,
  });
  const text = await res.body.text();
  return {
    status: res.statusCode,
    contentType: String(res.headers['content-type'] ?? ''),
    text,
    code: codeIn(text),
  };
}

/** The first complete HTTP response in `raw`, or undefined when it is not all there yet. */
function firstResponse(raw: Buffer): { head: string; body: string } | undefined {
  const split = raw.indexOf('\r\n\r\n');
  if (split < 0) return undefined;
  const head = raw.subarray(0, split).toString('latin1');
  const length = Number(/\r\ncontent-length:\s*(\d+)/i.exec(head)?.[1] ?? 0);
  const body = raw.subarray(split + 4, split + 4 + length);
  return body.length === length ? { head, body: body.toString('utf8') } : undefined;
}

/** Sends bytes exactly as given (no client fixing the framing) and returns the first answer. */
export function rawExchange(
  sim: RunningSimulator,
  bytes: Buffer | string,
): Promise<{ head: string; body: string }> {
  const { hostname, port } = new URL(sim.url);
  return new Promise((resolve, reject) => {
    const socket = net.connect(Number(port), hostname);
    let raw = Buffer.alloc(0);
    socket.on('data', (c: Buffer) => {
      raw = Buffer.concat([raw, c]);
      const answer = firstResponse(raw);
      if (answer) {
        socket.destroy();
        resolve(answer);
      }
    });
    socket.on('error', reject);
    socket.on('close', () =>
      reject(
        new Error(
          `connection closed without a complete answer: ${JSON.stringify(raw.toString('latin1'))}`,
        ),
      ),
    );
    socket.write(bytes);
  });
}

/** A request written by hand, header by header. */
export function rawRequest(
  path: string,
  headers: Record<string, string>,
  body: Buffer | string,
): Buffer {
  const lines = [
    `POST ${path} HTTP/1.1`,
    'host: 127.0.0.1',
    ...Object.entries(headers).map(([k, v]) => `${k}: ${v}`),
  ];
  return Buffer.concat([Buffer.from(`${lines.join('\r\n')}\r\n\r\n`, 'latin1'), Buffer.from(body)]);
}

export function baseOptions(extra: Partial<SimulatorOptions> = {}): SimulatorOptions {
  return {
    accountSid: SID,
    authToken: TOKEN,
    appIds: [APP],
    templates: { '1': 2, '2': 1, '3': 0 },
    now: () => NOON,
    timezone: 'UTC',
    ...extra,
  };
}

export function start(extra: Partial<SimulatorOptions> = {}): Promise<RunningSimulator> {
  return startSimulator(baseOptions(extra));
}

/**
 * Waits until `check` holds (polling; no time limit of its own: the test runner's timeout applies).
 */
export async function until(check: () => boolean): Promise<void> {
  while (!check()) await new Promise((r) => setTimeout(r, 10));
}
