// The daemon's HTTP surface (SMSDROP_HTTP). GET /healthz, /metrics, /api/status, /api/files,
// /api/files/:id, /files/:id/result.csv and /rejected.csv, and the dashboard (/ and its assets,
// served from here: it works with no internet). Off loopback every request needs the bearer
// token; without one, the Host header must name this host (address.ts). The one write is an
// operator's command on a file, POST /api/files/:id/{approve,pause,resume,cancel} (control.ts),
// which always needs the token; any other method is refused.
import { createReadStream, mkdtempSync, rmSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { writeResultCsv } from '../results/resultCsv.js';
import { writeRejectedCsv } from '../results/rejectedCsv.js';
import { stemOf } from '../datadir/names.js';
import { isDatabaseOutage, SmsdropError } from '../errors.js';
import { describeError } from '../log/redact.js';
import { FILE_STATUS } from '../ports/states.js';
import type { HttpAddress } from '../config/settings/httpAddress.js';
import { authorized, hostAllowed, HttpSetupError } from './address.js';
import { type ControlSource, controlRoute, handleControl } from './control.js';
import { dashboardAssets } from './dashboard.js';
import { checkHealth, type HealthSource } from './health.js';
import type { DaemonMetrics } from './metrics.js';
import { fileView, fileViews, overview, type ViewSource } from './views.js';

/** `reads` (ViewSource): the journal's read port, for the views (views.ts). */
export interface SurfaceSource extends ViewSource, ControlSource {
  /**
   * The file is read or sent now, or its result file is still written ahead: its result and
   * rejected files are not to be written from under it.
   */
  busy(fileId: number): boolean;
  dataDir: string;
  token: string | undefined;
  /** Host names allowed besides loopback ones while there is no token (SMSDROP_HTTP_HOSTS). */
  hosts: readonly string[];
  /** /healthz answers ok or not without the token (SMSDROP_HEALTHZ_OPEN). */
  healthzOpen: boolean;
  health: HealthSource;
  metrics: DaemonMetrics;
  /** Where a request that failed is told of (warn), with what failed; the client gets its code. */
  log: ControlSource['log'] & { warn?(message: string, meta?: Record<string, unknown>): unknown };
}

export interface HttpSurface {
  /** As listened on: the port is the real one when 0 was asked for. */
  url: string;
  close(): Promise<void>;
}

/** What the server answers with before the journal is open: who may ask, and the health checks. */
export type WaitingSource = Pick<SurfaceSource, 'token' | 'hosts' | 'healthzOpen' | 'health'>;

export interface OpeningHttpSurface extends HttpSurface {
  /** From now on requests are answered from the journal's ports. */
  serve(source: SurfaceSource): void;
}

/** Listens on `address`; an address in use or not this host's is an HttpSetupError. */
export async function startHttpSurface(
  address: Required<HttpAddress>,
  source: SurfaceSource,
): Promise<HttpSurface> {
  const surface = await listenBeforeJournal(address, source);
  surface.serve(source);
  return surface;
}

/**
 * Listens on `address` while the journal is not open yet (a node waiting for its PostgreSQL
 * server at the start): /healthz answers 503 from `waiting` and every route that reads the journal
 * a coded 503, until serve() hands the requests to the journal; a load balancer sees the node
 * down, not gone. The token and Host rules apply from the first request.
 */
export async function listenBeforeJournal(
  address: Required<HttpAddress>,
  waiting: WaitingSource,
): Promise<OpeningHttpSurface> {
  const assets = dashboardAssets();
  let source: SurfaceSource | undefined;
  const server = createServer((req, res) => {
    if (source)
      handle(req, res, source, assets).catch((err: unknown) => sendFailure(res, source!, err));
    else
      answerBeforeJournal(req, res, waiting, assets).catch(() =>
        sendJson(res, 503, JOURNAL_UNREACHABLE),
      );
  });
  server.keepAliveTimeout = 5_000;
  await listen(server, address);
  const bound = server.address() as AddressInfo;
  const host = bound.family === 'IPv6' ? `[${bound.address}]` : bound.address;
  return {
    url: `http://${host}:${bound.port}`,
    serve: (ready) => (source = ready),
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections(); // a dashboard's keep-alive socket must not hold the stop
      }),
  };
}

/** Before the journal is open: /healthz says why (503), every other route is a coded 503. */
async function answerBeforeJournal(
  req: IncomingMessage,
  res: ServerResponse,
  waiting: WaitingSource,
  assets: Assets,
): Promise<void> {
  const route = await admitted(req, res, waiting, assets);
  if (route === undefined) return;
  if (route === '/healthz') {
    const health = await checkHealth(waiting.health);
    return sendJson(res, health.ok ? 200 : 503, health);
  }
  sendJson(res, 503, JOURNAL_UNREACHABLE);
}

function listen(server: Server, address: Required<HttpAddress>): Promise<void> {
  return new Promise((resolve, reject) => {
    server.once('error', (err: NodeJS.ErrnoException) => {
      const why =
        err.code === 'EADDRINUSE'
          ? 'is in use (another smsdrop daemon? set another port, or off)'
          : err.code === 'EADDRNOTAVAIL'
            ? 'is not an address of this host'
            : err.message;
      reject(
        new HttpSetupError(
          err.code === 'EADDRINUSE' ? 'E_HTTP_ADDRESS_IN_USE' : 'E_CONFIG_HTTP',
          `SMSDROP_HTTP=${address.text}: ${why}`,
        ),
      );
    });
    server.listen(address.port, address.host, () => resolve());
  });
}

type Assets = ReturnType<typeof dashboardAssets>;

/**
 * The route a request may have answered, or undefined when it is answered already: a method other
 * than GET, a Host not this daemon's, an asset, a missing token (and /healthz's open answer).
 */
async function admitted(
  req: IncomingMessage,
  res: ServerResponse,
  source: WaitingSource,
  assets: Assets,
): Promise<string | undefined> {
  const route = new URL(req.url ?? '/', 'http://smsdrop').pathname;
  const write = controlRoute(route) !== undefined;
  const allowed = write ? ['POST'] : ['GET', 'HEAD'];
  if (!allowed.includes(req.method ?? '')) {
    res.setHeader('Allow', allowed.join(', '));
    send(res, 405, 'text/plain', `only ${allowed.join(' or ')} here\n`);
    return undefined;
  }
  if (!source.token && !hostAllowed(req.headers.host, source.hosts)) {
    send(
      res,
      421,
      'text/plain',
      'this daemon answers requests for localhost, 127.0.0.1 or [::1] (or SMSDROP_HTTP_HOSTS) only\n',
    );
    return undefined;
  }
  if (write) return route; // control.ts checks a write's token and origin by its own rules
  // The page and its scripts hold no figures, so a browser may load them without the token; the
  // page then asks for the figures with the token it is given in its address's #fragment.
  const asset = assets.get(route);
  if (asset) {
    send(res, 200, asset.type, asset.body);
    return undefined;
  }
  if (authorized(req.headers.authorization, source.token)) return route;
  if (route === '/healthz' && source.healthzOpen) {
    const { ok } = await checkHealth(source.health);
    sendJson(res, ok ? 200 : 503, { ok });
    return undefined;
  }
  res.setHeader('WWW-Authenticate', 'Bearer');
  send(
    res,
    401,
    'text/plain',
    'a bearer token is required (Authorization: Bearer SMSDROP_HTTP_TOKEN)\n',
  );
  return undefined;
}

async function handle(
  req: IncomingMessage,
  res: ServerResponse,
  source: SurfaceSource,
  assets: Assets,
): Promise<void> {
  const route = await admitted(req, res, source, assets);
  if (route === undefined) return;
  const write = controlRoute(route);
  if (write)
    return handleControl(
      req,
      (status, body, headers) => sendJson(res, status, body, headers),
      source,
      write,
    );
  if (route === '/healthz') {
    const health = await checkHealth(source.health);
    return sendJson(res, health.ok ? 200 : 503, health);
  }
  if (route === '/metrics')
    return send(
      res,
      200,
      source.metrics.registry.contentType,
      await source.metrics.registry.metrics(),
    );
  if (route === '/api/status')
    return sendJson(res, 200, {
      ...(await overview(source, source.dataDir)),
      health: await checkHealth(source.health),
    });
  if (route === '/api/files')
    return sendJson(res, 200, {
      files: await fileViews(source.reads, (await overview(source, source.dataDir)).status),
    });
  const one = /^\/api\/files\/(\d+)$/.exec(route);
  if (one) {
    const { status } = await overview(source, source.dataDir);
    const view = await fileView(source, Number(one[1]), status);
    return view ? sendJson(res, 200, view) : sendJson(res, 404, { error: `no file ${one[1]}` });
  }
  const download = /^\/files\/(\d+)\/(result|rejected)\.csv$/.exec(route);
  if (download)
    return sendResultFile(res, source, Number(download[1]), download[2] as 'result' | 'rejected');
  return send(res, 404, 'text/plain', 'not found\n');
}

/**
 * A file's result (or rejected rows) written from the journal now, once the file is over: while
 * it runs, its result file is being written ahead (results/spool.ts spoolResults) and is not to be
 * taken from under it.
 */
async function sendResultFile(
  res: ServerResponse,
  source: SurfaceSource,
  id: number,
  which: 'result' | 'rejected',
): Promise<void> {
  const file = await source.reads.file(id);
  if (!file) return send(res, 404, 'text/plain', `no file ${id}\n`);
  if (file.pruned_at !== null)
    return send(
      res,
      410,
      'text/plain',
      `${file.name}: its rows were pruned on ${file.pruned_at} (SMSDROP_KEEP): \`smsdrop report ${id}\` still has its counts, no longer who got it\n`,
    );
  const over =
    (file.status === FILE_STATUS.done || file.status === FILE_STATUS.refused) && !source.busy(id);
  if (!over)
    return send(
      res,
      409,
      'text/plain',
      `${file.name} is still ${file.status}: its ${which} file is ready once it is over\n`,
    );
  const dir = mkdtempSync(path.join(os.tmpdir(), 'smsdrop-download-'));
  const stem = stemOf(file.name);
  try {
    const written =
      which === 'result'
        ? await writeResultCsv(source.reads, id, dir, stem)
        : await writeRejectedCsv(source.reads, id, dir, stem);
    if (!written) return send(res, 404, 'text/plain', `${file.name} has no rejected rows\n`);
    res.writeHead(200, {
      ...NOT_CACHED,
      'Content-Type': 'text/csv; charset=utf-8',
      'Content-Disposition': `attachment; filename*=UTF-8''${encodeURIComponent(path.basename(written))}`,
    });
    await new Promise<void>((resolve, reject) =>
      createReadStream(written)
        .on('error', reject)
        .pipe(res)
        .on('finish', resolve)
        .on('error', reject),
    );
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

const JOURNAL_UNREACHABLE = {
  error:
    'the journal does not answer (its PostgreSQL server is down or cut off): try again once /healthz is 200',
  code: 'E_DATABASE_UNREACHABLE',
};

/**
 * A request that failed: 503 with E_DATABASE_UNREACHABLE while the journal's server does not
 * answer (it may come back: a client asks again), 500 with E_UNEXPECTED otherwise. Either way the
 * body is JSON with a code and words of smsdrop's: the driver's text (addresses, ports) stays in
 * the daemon's log.
 */
function sendFailure(res: ServerResponse, source: SurfaceSource, err: unknown): void {
  if (isDatabaseOutage(err)) return sendJson(res, 503, JOURNAL_UNREACHABLE);
  source.log.warn?.(`HTTP request failed: ${describeError(err)}`, { event: 'http-failed' });
  const own = err instanceof SmsdropError && !isDatabaseOutage(err);
  sendJson(res, 500, {
    error: own ? err.message : 'unexpected error (the daemon log says more)',
    code: own ? err.code : 'E_UNEXPECTED',
  });
}

/** On every answer: figures and phone numbers stay out of caches, and types are as sent. */
const NOT_CACHED = { 'Cache-Control': 'no-store', 'X-Content-Type-Options': 'nosniff' };

function sendJson(
  res: ServerResponse,
  status: number,
  body: unknown,
  headers?: Record<string, string>,
): void {
  send(
    res,
    status,
    'application/json; charset=utf-8',
    `${JSON.stringify(body, null, 2)}\n`,
    headers,
  );
}

function send(
  res: ServerResponse,
  status: number,
  type: string,
  body: string | Buffer,
  headers?: Record<string, string>,
): void {
  if (res.headersSent) {
    res.destroy();
    return;
  }
  res.writeHead(status, { ...NOT_CACHED, ...headers, 'Content-Type': type });
  res.end(body);
}
