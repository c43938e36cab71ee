// The daemon's operator surface: the HTTP server (dashboard, /metrics, /healthz, JSON API) and the
// webhook delivery, started once the journal is open and stopped before it closes. Set-up
// mistakes (a public address without a token, an address in use) are HttpSetupErrors: the daemon
// stops with one line and exit 2, which pm2 does not restart.
import type { Config } from '../config/index.js';
import { checkHttpAccess, hostList } from '../http/address.js';
import type { HealthSource } from '../http/health.js';
import { createMetrics, type DaemonMetrics } from '../http/metrics.js';
import {
  type HttpSurface,
  listenBeforeJournal,
  type OpeningHttpSurface,
  startHttpSurface,
  type SurfaceSource,
} from '../http/server.js';
import type { Logger } from '../log/logger.js';
import { registerSecret } from '../log/redact.js';
import type { Runtime } from '../pipeline/runtime.js';
import { type Deliverer, startDelivery } from '../webhooks/deliver.js';
import { type WebhookTarget, webhookTargets } from '../config/settings/webhookUrls.js';

export interface OperatorSurface {
  /** The inbox watcher runs (true) or not: /healthz says so. */
  setWatching(on: boolean): void;
  close(): Promise<void>;
}

/** Before anything opens: the token is a secret from now on, and a public address needs one. */
export function checkSurfaceSettings(config: Config): void {
  registerSecret(config.httpToken);
  registerSecret(config.webhookSecret);
  for (const target of webhookTargets(config.webhookUrl)) registerWebhookSecrets(target.url);
  checkHttpAccess(config.http, config.httpToken);
}

/** The URL's password and query values are masked in every log line, like the auth token. */
function registerWebhookSecrets(text: string): void {
  const url = new URL(text);
  registerSecret(decodeURIComponent(url.password));
  for (const value of url.searchParams.values()) registerSecret(value);
}

/**
 * The HTTP server of a node whose journal's server does not answer at the start: it listens from
 * then on, /healthz answering 503 E_DATABASE_UNREACHABLE, and the surface takes it over once the
 * journal is open (the same address, the same port when 0 was asked for).
 */
export interface EarlyHttp {
  /** The journal's server does not answer: listen now (once; nothing without SMSDROP_HTTP). */
  listen(): void;
  /** What listens, if listen() was called; its HttpSetupError if it could not. */
  taken(): Promise<OpeningHttpSurface | undefined>;
  /** Stops listening (the journal never opened). */
  close(): Promise<void>;
}

export function earlyHttp(config: Config, log: Logger): EarlyHttp {
  let listening: Promise<OpeningHttpSurface> | undefined;
  const { host, port, text } = config.http;
  return {
    listen() {
      if (listening || host === undefined || port === undefined) return;
      listening = listenBeforeJournal(
        { text, host, port },
        {
          token: config.httpToken,
          hosts: hostList(config.httpHosts),
          healthzOpen: config.healthzOpen,
          health: {
            journal: { health: () => 'unreachable' },
            dataDir: config.dataDir,
            diskFloorBytes: config.diskFloorMb * 1024 * 1024,
            watching: () => false,
            paused: () => undefined,
            webhooksFailing: () => [],
          },
        },
      );
      listening.then(
        (http) =>
          log.info(
            `dashboard, metrics and health check on ${http.url}/: /healthz answers 503 (E_DATABASE_UNREACHABLE) until the journal's server answers`,
            { event: 'http-listening', url: http.url, journal: 'waiting' },
          ),
        () => {}, // said when the surface starts: taken() gives it its error
      );
    },
    taken: () => listening ?? Promise.resolve(undefined),
    close: async () => {
      await (await listening?.catch(() => undefined))?.close();
    },
  };
}

export async function startOperatorSurface(
  config: Config,
  runtime: Runtime,
  log: Logger,
  early?: EarlyHttp,
): Promise<OperatorSurface> {
  const targets = webhookTargets(config.webhookUrl);
  // From now on the journal writes the events webhooks report (journal/outbox.ts).
  runtime.journal.outbox.setTargets(targets.map((t) => t.id));
  const { context } = runtime;
  const metrics = createMetrics({
    reads: runtime.journal.reads,
    inProgress: context.inProgress,
    pausedCode: () => context.pause.outage?.code,
  });
  context.client = metrics.timed(context.client);
  context.rateLimiter = metrics.counted(context.rateLimiter);
  const delivery = startWebhooks(config, runtime, targets, log);
  let watching = false;
  let http: HttpSurface | undefined;
  try {
    http = await startHttp(
      config,
      runtime,
      metrics,
      {
        journal: runtime.journal.reads,
        dataDir: config.dataDir,
        diskFloorBytes: config.diskFloorMb * 1024 * 1024,
        watching: () => watching,
        paused: () => context.pause.outage?.reason,
        pausedCode: () => context.pause.outage?.code,
        webhooksFailing: () => delivery?.failing() ?? [],
      },
      log,
      await early?.taken(),
    );
  } catch (err) {
    await delivery?.stop();
    throw err;
  }
  if (http)
    log.info(
      `dashboard, metrics and health check on ${http.url}/ (/metrics, /healthz, /api/files)${config.httpToken ? '; a bearer token is required' : ''}`,
      { event: 'http-listening', url: http.url },
    );
  return {
    setWatching: (on) => (watching = on),
    async close() {
      await http?.close();
      await delivery?.stop();
    },
  };
}

/** Delivery of the journal's webhook events, when SMSDROP_WEBHOOK_URL names targets. */
function startWebhooks(
  config: Config,
  runtime: Runtime,
  targets: WebhookTarget[],
  log: Logger,
): Deliverer | undefined {
  if (targets.length === 0) return undefined;
  const delivery = startDelivery({
    outbox: runtime.journal.outbox,
    targets,
    format: config.webhookFormat,
    secret: config.webhookSecret,
    log,
  });
  log.info(
    `webhook events go to ${targets.map((t) => t.shown).join(', ')} (${config.webhookFormat})`,
  );
  return delivery;
}

/** The HTTP server, when SMSDROP_HTTP names an address. */
async function startHttp(
  config: Config,
  runtime: Runtime,
  metrics: DaemonMetrics,
  health: HealthSource,
  log: Logger,
  listening: OpeningHttpSurface | undefined,
): Promise<HttpSurface | undefined> {
  const address = config.http;
  if (address.host === undefined || address.port === undefined) return undefined;
  const source: SurfaceSource = {
    reads: runtime.journal.reads,
    control: runtime.journal.control,
    log,
    busy: (id) => runtime.context.inProgress.has(id) || runtime.spools.pending(id),
    dataDir: config.dataDir,
    token: config.httpToken,
    hosts: hostList(config.httpHosts),
    healthzOpen: config.healthzOpen,
    metrics,
    health,
  };
  if (!listening)
    return await startHttpSurface(
      { text: address.text, host: address.host, port: address.port },
      source,
    );
  listening.serve(source);
  return listening;
}
