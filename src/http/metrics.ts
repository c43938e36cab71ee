// The daemon's Prometheus metrics (GET /metrics), names prefixed smsdrop_. What the journal knows
// (numbers, rows and files by status, requests by outcome) is read from it at scrape time; only
// what it does not keep is counted as it happens, cheaply: request latency and requests in flight
// (a wrapper around the provider client) and time waited on rate limits (around the limiter).
import { statSync } from 'node:fs';
import client from 'prom-client';
import type { Journal } from '../journal/open.js';
import {
  filesByStatus,
  numbersByOutcome,
  requestsByOutcome,
  rowsByStatus,
} from '../journal/reads.js';
import type { ProviderClient } from '../provider/client.js';
import type { RateLimiter } from '../send/rate.js';

export interface MetricsSource {
  db: Journal;
  journalFile: string;
  /** Why sending is paused now, or undefined. */
  paused(): string | undefined;
}

export interface DaemonMetrics {
  registry: client.Registry;
  /** The provider client, timed. */
  timed(provider: ProviderClient): ProviderClient;
  /** The rate limiter, its waits counted. */
  counted(limiter: RateLimiter): RateLimiter;
}

export function createMetrics(source: MetricsSource): DaemonMetrics {
  const registry = new client.Registry();
  journalGauges(registry, source);
  const latency = new client.Histogram({
    name: 'smsdrop_request_duration_seconds',
    help: 'Time from a request to the provider to its outcome, by outcome kind.',
    labelNames: ['outcome'],
    buckets: [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
    registers: [registry],
  });
  const inFlight = new client.Gauge({
    name: 'smsdrop_requests_in_flight',
    help: 'Requests sent and not answered yet.',
    registers: [registry],
  });
  const waited = new client.Counter({
    name: 'smsdrop_rate_limit_wait_seconds_total',
    help: 'Time requests waited on the rate limits (requests/messages per second, message window).',
    registers: [registry],
  });
  return {
    registry,
    timed: (provider) => ({
      close: () => provider.close(),
      async send(req, options) {
        inFlight.inc();
        const end = latency.startTimer();
        try {
          const outcome = await provider.send(req, options);
          end({ outcome: outcome.kind });
          return outcome;
        } finally {
          inFlight.dec();
        }
      },
    }),
    counted: (limiter) => ({
      async take(numbers, signal) {
        const started = performance.now();
        try {
          return await limiter.take(numbers, signal);
        } finally {
          waited.inc((performance.now() - started) / 1000);
        }
      },
    }),
  };
}

/** Gauges whose values are read from the journal when scraped. */
function journalGauges(registry: client.Registry, source: MetricsSource): void {
  const { db } = source;
  gauge(
    registry,
    'smsdrop_numbers',
    'Numbers with an outcome, by outcome and provider status code.',
    ['outcome', 'code'],
    (g) => {
      for (const n of numbersByOutcome(db)) g.set({ outcome: n.outcome, code: n.code }, n.numbers);
    },
  );
  gauge(
    registry,
    'smsdrop_requests',
    'Requests made to the provider, by outcome.',
    ['outcome'],
    (g) => {
      for (const r of requestsByOutcome(db)) g.set({ outcome: r.outcome }, r.requests);
    },
  );
  gauge(registry, 'smsdrop_rows', 'Rows of every file, by status.', ['status'], (g) => {
    for (const [status, rows] of Object.entries(rowsByStatus(db))) g.set({ status }, rows);
  });
  gauge(registry, 'smsdrop_files', 'Files in the journal, by status.', ['status'], (g) => {
    for (const f of filesByStatus(db)) g.set({ status: f.status }, f.files);
  });
  gauge(registry, 'smsdrop_files_in_progress', 'Files being read or sent now.', [], (g) =>
    g.set(db.filesInProgress.size),
  );
  gauge(
    registry,
    'smsdrop_paused',
    'Sending paused (1) with the reason as a label, or not (0).',
    ['reason'],
    (g) => {
      const reason = source.paused();
      g.set({ reason: reason ?? '' }, reason ? 1 : 0);
    },
  );
  gauge(
    registry,
    'smsdrop_journal_bytes',
    "The journal's size on disk (its WAL included).",
    [],
    (g) => {
      const size = (file: string) => statSync(file, { throwIfNoEntry: false })?.size ?? 0;
      g.set(size(source.journalFile) + size(`${source.journalFile}-wal`));
    },
  );
}

/** A gauge set afresh at each scrape (reset first: a label that is gone does not linger). */
function gauge(
  registry: client.Registry,
  name: string,
  help: string,
  labelNames: string[],
  fill: (g: client.Gauge) => void,
): void {
  new client.Gauge({
    name,
    help,
    labelNames,
    registers: [registry],
    collect() {
      this.reset();
      fill(this);
    },
  });
}
