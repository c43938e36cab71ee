// The daemon's operator surface: the HTTP server (dashboard, /metrics, /healthz, JSON API) and the
// webhook delivery, started once the journal is open and stopped before it closes. Set-up
// mistakes (a public address without a token, an address in use) are HttpSetupErrors: the daemon
// stops with one line and exit 2, which pm2 does not restart.
import type { Config } from '../config/index.js';
import { checkHttpAccess, hostList } from '../http/address.js';
import { createMetrics } from '../http/metrics.js';
import { type HttpSurface, startHttpSurface } from '../http/server.js';
import { journalPath } from '../journal/open.js';
import type { Logger } from '../log/logger.js';
import { registerSecret } from '../log/redact.js';
import type { Runtime } from '../pipeline/runtime.js';
import { type Deliverer, startDelivery } from '../webhooks/deliver.js';
import { webhookTargets } from '../config/settings/webhookUrls.js';

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

export async function startOperatorSurface(
  config: Config,
  runtime: Runtime,
  log: Logger,
): Promise<OperatorSurface> {
  const targets = webhookTargets(config.webhookUrl);
  // From now on the journal writes the events webhooks report (journal/outbox.ts).
  runtime.db.webhookTargets = targets.map((t) => t.id);
  const { context } = runtime;
  const paused = () => context.pause.outage?.reason;
  const metrics = createMetrics({
    db: runtime.db,
    journalFile: journalPath(config.dataDir),
    pausedCode: () => context.pause.outage?.code,
  });
  context.client = metrics.timed(context.client);
  context.rateLimiter = metrics.counted(context.rateLimiter);
  let delivery: Deliverer | undefined;
  if (targets.length > 0) {
    delivery = startDelivery({
      db: runtime.db,
      targets,
      format: config.webhookFormat,
      secret: config.webhookSecret,
      log,
    });
    log.info(
      `webhook events go to ${targets.map((t) => t.shown).join(', ')} (${config.webhookFormat})`,
    );
  }
  let watching = false;
  let http: HttpSurface | undefined;
  const address = config.http;
  if (address.host !== undefined && address.port !== undefined) {
    try {
      http = await startHttpSurface(
        { text: address.text, host: address.host, port: address.port },
        {
          db: runtime.db,
          reads: runtime.journal.reads,
          spools: runtime.spools,
          dataDir: config.dataDir,
          token: config.httpToken,
          hosts: hostList(config.httpHosts),
          healthzOpen: config.healthzOpen,
          metrics,
          health: {
            db: runtime.db,
            dataDir: config.dataDir,
            diskFloorBytes: config.diskFloorMb * 1024 * 1024,
            watching: () => watching,
            paused,
            webhooksFailing: () => delivery?.failing() ?? [],
          },
        },
      );
    } catch (err) {
      await delivery?.stop();
      throw err;
    }
    log.info(
      `dashboard, metrics and health check on ${http.url}/ (/metrics, /healthz, /api/files)${config.httpToken ? '; a bearer token is required' : ''}`,
      { event: 'http-listening', url: http.url },
    );
  }
  return {
    setWatching: (on) => (watching = on),
    async close() {
      await http?.close();
      await delivery?.stop();
    },
  };
}
