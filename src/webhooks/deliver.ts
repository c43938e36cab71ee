// Posts the outbox's webhook events (journal/outbox.ts) to each receiver, in order, each until a
// 2xx answer (and, for a robot, errcode 0), then marks it delivered. A receiver that fails is tried
// again after a growing pause (1 s doubling to 5 min) while the others go on; nothing here is on
// the sending path: a receiver that is down only delays its own events. One that has failed for
// longer than `alertAfterMs` is named in /healthz and logged once (and again when it is back).
//
// Marked delivered after the answer: a crash in between posts that event again at the next start
// (at least once); the body's `id` lets a receiver drop the repeat.
import type { OutboxRow, OutboxStore } from '../ports/index.js';
import type { Logger } from '../log/logger.js';
import { redactSecrets } from '../log/redact.js';
import { webhookPost } from './format.js';
import type { WebhookFormat, WebhookTarget } from '../config/settings/webhookUrls.js';

export interface DeliveryOptions {
  outbox: OutboxStore;
  targets: WebhookTarget[];
  format: WebhookFormat;
  secret: string | undefined;
  log: Logger;
  /** A receiver failing this long is unhealthy (default 10 min). */
  alertAfterMs?: number;
  /** How often the outbox is looked at (default 500 ms). */
  pollMs?: number;
}

export interface Deliverer {
  /** Receivers failing for longer than alertAfterMs, with why. */
  failing(): string[];
  stop(): Promise<void>;
}

interface TargetState {
  target: WebhookTarget;
  failures: number;
  failingSince: number | undefined;
  lastError: string;
  retryAt: number;
  alerted: boolean;
}

const MAX_BACKOFF_MS = 300_000;
const REQUEST_TIMEOUT_MS = 10_000;

export function startDelivery(options: DeliveryOptions): Deliverer {
  const alertAfterMs = options.alertAfterMs ?? 600_000;
  const states = options.targets.map((target): TargetState => ({
    target,
    failures: 0,
    failingSince: undefined,
    lastError: '',
    retryAt: 0,
    alerted: false,
  }));
  let stopped = false;
  // one round at a time: a slow receiver does not pile rounds up
  let running: Promise<void> | undefined;
  const timer = setInterval(() => {
    if (stopped || running) return;
    running = Promise.all(
      states.map((s) =>
        deliverDue(s, options, alertAfterMs).catch((err: unknown) =>
          options.log.warn(`webhook ${s.target.shown}: ${redactSecrets(String(err))}`),
        ),
      ),
    )
      .then(() => undefined)
      .finally(() => (running = undefined));
  }, options.pollMs ?? 500);
  timer.unref();
  return {
    failing: () =>
      states
        .filter((s) => s.failingSince !== undefined && Date.now() - s.failingSince >= alertAfterMs)
        .map(
          (s) =>
            `webhook ${s.target.shown} failing since ${new Date(s.failingSince!).toISOString()}: ${s.lastError}`,
        ),
    async stop() {
      stopped = true;
      clearInterval(timer);
      await running;
    },
  };
}

/** Posts the receiver's waiting events in order, until one fails or none is left. */
async function deliverDue(
  state: TargetState,
  options: DeliveryOptions,
  alertAfterMs: number,
): Promise<void> {
  const { outbox } = options;
  if (Date.now() < state.retryAt) return;
  // Inside an open transaction (a file's intake) its events are not committed yet: they wait.
  if (!outbox.canDeliver()) return;
  for (const event of await outbox.undelivered(state.target.id, 20)) {
    const error = await post(event, state.target, options);
    if (!outbox.isOpen()) return;
    if (error === undefined) {
      await outbox.markDelivered([event.id]);
      if (state.alerted)
        options.log.info(`webhook ${state.target.shown} delivers again`, {
          event: 'webhook-recovered',
        });
      Object.assign(state, { failures: 0, failingSince: undefined, retryAt: 0, alerted: false });
      continue;
    }
    await outbox.noteDeliveryFailed(event.id, error);
    state.failures++;
    state.failingSince ??= Date.now();
    state.lastError = error;
    state.retryAt =
      Date.now() + Math.min(MAX_BACKOFF_MS, 1_000 * 2 ** Math.min(state.failures - 1, 20));
    if (!state.alerted && Date.now() - state.failingSince >= alertAfterMs) {
      state.alerted = true;
      options.log.error(
        `webhook ${state.target.shown} has failed since ${new Date(state.failingSince).toISOString()} (${error}); its events wait in the journal`,
        { event: 'webhook-failing' },
      );
    } else
      options.log.debug(
        `webhook ${state.target.shown}: ${event.event} not delivered (${error}); tried again later`,
      );
    return;
  }
}

/** Undefined when delivered, else why not (without the URL's secrets). */
async function post(
  event: OutboxRow,
  target: WebhookTarget,
  options: DeliveryOptions,
): Promise<string | undefined> {
  const request = webhookPost(target.url, event.body, options.format, options.secret);
  try {
    const res = await fetch(request.url, {
      method: 'POST',
      headers: request.headers,
      body: request.body,
      redirect: 'error',
      signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
    });
    const text = await res.text();
    if (res.status < 200 || res.status > 299) return `HTTP ${res.status}`;
    if (options.format !== 'json') {
      const errcode = (safeJson(text) as { errcode?: unknown } | undefined)?.errcode;
      if (errcode !== undefined && errcode !== 0)
        return `robot answered errcode ${JSON.stringify(errcode)}`;
    }
    return undefined;
  } catch (err) {
    const e = err as Error & { cause?: { code?: string; message?: string } };
    return redactSecrets(e.cause?.code ?? e.cause?.message ?? e.message)
      .split(target.url)
      .join(target.shown);
  }
}

function safeJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}
