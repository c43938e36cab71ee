// The provider simulator: a real HTTP(S) server that plays the Cloopen Template SMS service, as
// lenient as the service where the official SDKs show it (wire.ts) and strict where it is, with the
// provider's status codes, a record of what it accepted, and injectable faults (HTTP 500, business
// errors, cut connections, stalls, a chosen code per number) to test a sender against.
// Entry point: startSimulator. The checks live in auth.ts, wire.ts and rules.ts, in that order.
import { randomBytes } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import http from 'node:http';
import https from 'node:https';
import type { AddressInfo, Socket } from 'node:net';
import { checkAuth, parseSmsUrl, type Account, type SmsTarget } from './auth.js';
import { dayOf, formatStamp } from './clock.js';
import { createFaultChooser, validateFaults } from './faults.js';
import { appendRecord, prepareRecordFile, readRecordFile } from './record.js';
import { errorReply, successReply, type Reply, type WireFormat } from './reply.js';
import { judgeSubmission, MAX_NUMBERS, ReqIdMemory, type Catalogue } from './rules.js';
import { makeCertificate } from './tls.js';
import type {
  AcceptedRecord,
  FaultRule,
  InFlightRequest,
  RunningSimulator,
  SimulatorOptions,
} from './types.js';
import { decodeSubmission, replyFormat, type Submission } from './wire.js';

/** The provider's own zone: its "natural day", which a reqId is unique within, is China's. */
const PROVIDER_ZONE = 'Asia/Shanghai';

export type {
  AcceptedRecord,
  FaultKind,
  FaultRule,
  InFlightRequest,
  RunningSimulator,
  SimulatorOptions,
} from './types.js';
export { parseFaults, parseTemplates } from './faults.js';
export { readRecordFile } from './record.js';

/** Bodies beyond this are cut short, which the Content-Length check then answers with 112612. */
const MAX_BODY_BYTES = 1024 * 1024;

/** smsMessageSid: 16 random bytes in hex. */
const SID_BYTES = 16;
// One call into the system's RNG per sid cost more than building the reply: draw them 256 at a
// time.
const SIDS_PER_DRAW = 256;
let sidPool = Buffer.alloc(0);
let sidOffset = 0;

function newMessageSid(): string {
  if (sidOffset + SID_BYTES > sidPool.length) {
    sidPool = randomBytes(SID_BYTES * SIDS_PER_DRAW);
    sidOffset = 0;
  }
  sidOffset += SID_BYTES;
  return sidPool.toString('hex', sidOffset - SID_BYTES, sidOffset);
}

/** Starts listening; resolves once the URL is known (and, with https, the certificate written). */
export async function startSimulator(o: SimulatorOptions): Promise<RunningSimulator> {
  validateOptions(o);
  const certificate = o.https ? (o.certificate ?? (await makeCertificate())) : undefined;
  if (certificate && o.caFile) writeFileSync(o.caFile, certificate.cert, 'utf8');
  if (o.recordFile) prepareRecordFile(o.recordFile);
  const server = certificate
    ? https.createServer({ key: certificate.key, cert: certificate.cert })
    : http.createServer();
  const simulator = new Simulator(o, server);
  if (certificate) {
    simulator.caPem = certificate.cert;
    if (o.caFile) simulator.caFile = o.caFile;
  }
  await simulator.listen(o.host ?? '127.0.0.1', o.port ?? 0, certificate ? 'https' : 'http');
  return simulator;
}

function validateOptions(o: SimulatorOptions): void {
  const fail = (what: string, got: unknown): never => {
    throw new Error(`Expected \`${what}\`, got ${JSON.stringify(got)}`);
  };
  if (!o.accountSid) fail('accountSid to be a non-empty string', o.accountSid);
  if (!o.authToken) fail('authToken to be a non-empty string', '(hidden)');
  if (!Array.isArray(o.appIds) || o.appIds.length === 0 || !o.appIds.every((a) => a))
    fail('appIds to list at least one app id', o.appIds);
  const counts = Object.values(o.templates ?? {});
  if (counts.length === 0 || !counts.every((n) => Number.isInteger(n) && n >= 0))
    fail('templates to map ids to variable counts >= 0', o.templates);
  const port = o.port ?? 0;
  if (!Number.isInteger(port) || port < 0 || port > 65535)
    fail('port to be a whole number from 0 to 65535', o.port);
  const [min, max] = o.latencyMs ?? [0, 0];
  if (!(min >= 0 && max >= min && Number.isFinite(max)))
    fail('latencyMs to be [min, max] with 0 <= min <= max', o.latencyMs);
  if (o.timezone !== undefined) {
    try {
      new Intl.DateTimeFormat('en-US', { timeZone: o.timezone });
    } catch {
      fail('timezone to be an IANA time zone such as Asia/Shanghai', o.timezone);
    }
  }
  validateFaults(o.faults ?? []);
  for (const [number, code] of Object.entries(o.numberCodes ?? {})) {
    if (!/^\d{6}$/.test(code) || code === '000000')
      fail(`numberCodes[${number}] to be a 6-digit failure code`, code);
  }
}

/** What the handler does with a request once it has decided. */
type Answer =
  | { kind: 'plain'; status: number; text: string }
  | { kind: 'reply'; reply: Reply }
  | { kind: 'cut' }
  | { kind: 'hold' };

/** A stalled request's answer once its stall is over: the gateway's, not the service's. */
const GATEWAY_TIMEOUT: Answer = {
  kind: 'plain',
  status: 504,
  text: 'Gateway Timeout (simulated stall)\n',
};

class Simulator implements RunningSimulator {
  url = '';
  caPem?: string;
  caFile?: string;
  records: AcceptedRecord[] = [];
  acceptedCount = 0;
  requestCount = 0;
  peakRequests: readonly InFlightRequest[] = [];
  readonly #inFlight = new Set<InFlightRequest>();

  readonly #o: SimulatorOptions;
  readonly #server: http.Server;
  readonly #account: Account;
  readonly #catalogue: Catalogue;
  readonly #memory = new ReqIdMemory();
  readonly #chooseFault: (n: number) => FaultRule | undefined;
  readonly #now: () => Date;
  readonly #sockets = new Set<Socket>();
  readonly #timers = new Set<NodeJS.Timeout>();
  /** Sockets with a request being handled: a parse error on them waits for its answer. */
  readonly #busy = new Set<Socket>();
  /** Sockets whose next bytes could not parse: closed once the request in progress is answered. */
  readonly #broken = new WeakSet<Socket>();
  #closing?: Promise<void>;

  constructor(o: SimulatorOptions, server: http.Server) {
    this.#o = o;
    this.#server = server;
    this.#account = { accountSid: o.accountSid, authToken: o.authToken };
    this.#catalogue = {
      appIds: new Set(o.appIds),
      templates: new Map(Object.entries(o.templates)),
      blocked: new Set(o.blocked ?? []),
      capped: new Set(o.capped ?? []),
      numberCodes: new Map(Object.entries(o.numberCodes ?? {})),
      maxNumbers: o.maxNumbers ?? MAX_NUMBERS,
    };
    this.#chooseFault = createFaultChooser(o.faults ?? [], o.seed ?? randomBytes(4).readUInt32LE());
    this.#now = o.now ?? (() => new Date());
    if (o.recordFile) this.#rememberRecordedReqIds(o.recordFile);
    server.on('connection', (socket: Socket) => {
      this.#sockets.add(socket);
      socket.once('close', () => this.#sockets.delete(socket));
    });
    server.on('clientError', (_err: Error, socket: Socket) => this.#onClientError(socket));
    server.on('request', (req, res) => {
      this.#handle(req, res).catch(() => res.socket?.destroy());
    });
  }

  /** A restarted simulator still refuses today's reqIds, like the real service would. */
  #rememberRecordedReqIds(file: string): void {
    for (const r of readRecordFile(file)) {
      if (r.reqId) this.#memory.remember(r.reqId, dayOf(new Date(r.time), PROVIDER_ZONE));
    }
  }

  listen(host: string, port: number, scheme: 'http' | 'https'): Promise<void> {
    return new Promise((resolve, reject) => {
      this.#server.once('error', reject);
      this.#server.listen(port, host, () => {
        this.#server.off('error', reject);
        const { port: bound } = this.#server.address() as AddressInfo;
        this.url = `${scheme}://${host.includes(':') ? `[${host}]` : host}:${bound}`;
        resolve();
      });
    });
  }

  close(): Promise<void> {
    this.#closing ??= new Promise((resolve) => {
      for (const t of this.#timers) clearTimeout(t);
      this.#timers.clear();
      this.#server.close(() => resolve());
      // Stalled and keep-alive connections would keep close() waiting forever.
      this.#server.closeAllConnections();
      for (const socket of this.#sockets) socket.destroy();
    });
    return this.#closing;
  }

  /**
   * Bytes beyond a too-short Content-Length (a length counted in characters, not bytes) are read
   * as a next request that cannot parse. Node would answer a bare 400 at once, before the request
   * in progress; answering that request first (112612) shows the client the real cause.
   */
  #onClientError(socket: Socket): void {
    if (this.#busy.has(socket)) {
      this.#broken.add(socket);
      return;
    }
    if (socket.writable)
      socket.end('HTTP/1.1 400 Bad Request\r\nConnection: close\r\nContent-Length: 0\r\n\r\n');
    else socket.destroy();
  }

  async #handle(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    const socket = req.socket;
    this.#busy.add(socket);
    this.requestCount += 1;
    const fault = this.#chooseFault(this.requestCount);
    const request: InFlightRequest = {
      since: new Date().toISOString(),
      reqId: null,
      fault: fault?.kind ?? null,
    };
    this.#inFlight.add(request);
    if (this.#inFlight.size > this.peakRequests.length) this.peakRequests = [...this.#inFlight];
    res.once('close', () => {
      this.#busy.delete(socket);
      this.#inFlight.delete(request);
    });
    const body = await readBody(req);
    if (body === undefined || this.#closing) return;
    const answer = this.#decide(fault, req, body, request);
    const delay = this.#latency();
    // Without latency the answer goes out in this same turn: no promise to wait for.
    if (delay > 0) await this.#sleep(delay);
    if (this.#closing) return;
    if (this.#broken.has(socket)) res.setHeader('connection', 'close');
    if (answer.kind === 'hold' && this.#o.stallMs !== undefined) {
      await this.#sleep(this.#o.stallMs);
      if (this.#closing) return;
      send(res, GATEWAY_TIMEOUT);
      return;
    }
    send(res, answer);
  }

  /** The most requests in flight at once: those of the peak. */
  get peakInFlight(): number {
    return this.peakRequests.length;
  }

  #decide(
    fault: FaultRule | undefined,
    req: http.IncomingMessage,
    body: Buffer,
    request: InFlightRequest,
  ): Answer {
    switch (fault?.kind) {
      case 'http500':
        return { kind: 'plain', status: 500, text: 'Internal Server Error (simulated)\n' };
      case 'cut-before-accept':
        return { kind: 'cut' };
      case 'status':
        return {
          kind: 'reply',
          reply: errorReply(fault.statusCode ?? '160000', replyFormat(req.headers)),
        };
    }
    const answer = this.#process(req, body, request);
    if (fault?.kind === 'cut-after-accept') return { kind: 'cut' };
    if (fault?.kind === 'stall') return { kind: 'hold' };
    return answer;
  }

  #process(req: http.IncomingMessage, body: Buffer, request: InFlightRequest): Answer {
    const target = parseSmsUrl(req.url ?? '/');
    if (!target) return { kind: 'plain', status: 404, text: 'Not Found\n' };
    if (req.method !== 'POST') return { kind: 'plain', status: 405, text: 'Method Not Allowed\n' };
    const format = replyFormat(req.headers);
    return { kind: 'reply', reply: this.#answerSms(req, { target, body, format, request }) };
  }

  /** `request`: its entry in flight, which learns the reqId once the body is decoded. */
  #answerSms(
    req: http.IncomingMessage,
    {
      target,
      body,
      format,
      request,
    }: { target: SmsTarget; body: Buffer; format: WireFormat; request: InFlightRequest },
  ): Reply {
    const now = this.#now();
    const tz = this.#o.timezone;
    const authCode = checkAuth(
      { target, authorization: req.headers.authorization, now, timeZone: tz },
      this.#account,
    );
    if (authCode) return errorReply(authCode, format);
    // Node parses the bytes after a too-short body (and reports them, #onClientError) before the
    // body's end reaches this handler: the socket is marked broken by then.
    const decoded = decodeSubmission(req.headers, body, this.#broken.has(req.socket));
    if (!decoded.ok) return errorReply(decoded.code, format);
    request.reqId = decoded.submission.reqId ?? null;
    // the reqId's natural day is the provider's, in China, whatever zone the client signs in
    const today = dayOf(now, PROVIDER_ZONE);
    const verdict = judgeSubmission(decoded.submission, this.#catalogue, this.#memory, today);
    if (!verdict.ok) return errorReply(verdict.code, format);
    const record = this.#accept(decoded.submission, verdict.numbers, now, today);
    // The provider's clock, whatever zone the client signs in: dateCreated is China time.
    return successReply(record.smsMessageSid, formatStamp(now, PROVIDER_ZONE), format);
  }

  #accept(s: Submission, to: string[], now: Date, today: string): AcceptedRecord {
    const record: AcceptedRecord = {
      time: now.toISOString(),
      smsMessageSid: newMessageSid(),
      appId: s.appId,
      templateId: s.templateId,
      datas: s.datas,
      to,
    };
    if (s.reqId) {
      record.reqId = s.reqId;
      this.#memory.remember(s.reqId, today);
    }
    this.acceptedCount += 1;
    if (this.#o.keepRecords !== false) this.records.push(record);
    if (this.#o.recordFile) appendRecord(this.#o.recordFile, record);
    return record;
  }

  #latency(): number {
    const [min, max] = this.#o.latencyMs ?? [0, 0];
    return min + Math.random() * (max - min);
  }

  #sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        this.#timers.delete(timer);
        resolve();
      }, ms);
      this.#timers.add(timer);
    });
  }
}

/** The whole body, at most MAX_BODY_BYTES of it; undefined when the client went away first. */
function readBody(req: http.IncomingMessage): Promise<Buffer | undefined> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size <= MAX_BODY_BYTES) chunks.push(chunk);
    });
    req.on('end', () => resolve(Buffer.concat(chunks)));
    req.on('error', () => resolve(undefined));
    req.on('close', () => resolve(undefined));
  });
}

function send(res: http.ServerResponse, answer: Answer): void {
  if (answer.kind === 'hold') return;
  if (answer.kind === 'cut') {
    res.socket?.destroy();
    return;
  }
  const [status, type, text] =
    answer.kind === 'plain'
      ? [answer.status, 'text/plain;charset=utf-8', answer.text]
      : [200, answer.reply.contentType, answer.reply.body];
  res.writeHead(status, { 'content-type': type, 'content-length': Buffer.byteLength(text) });
  res.end(text);
}
