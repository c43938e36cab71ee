// The daemon's Prometheus metrics (GET /metrics), names prefixed smsdrop_, and prom-client's
// process metrics (process_*, nodejs_*). What the journal knows (numbers, rows and files by
// status, requests by outcome) is read from it at scrape time; only what it does not keep is
// counted as it happens, cheaply: request latency and requests in flight (a wrapper around the
// provider client) and time waited on rate limits (around the limiter). Totals since the journal
// began are counters (_total) that pruning does not lower (pruned_totals); states now are gauges.
// Label values come from fixed sets: outcomes, provider status codes, smsdrop's E_ codes; and the
// ids of the nodes sharing a PostgreSQL journal, those seen in the last hour.
import { readFileSync } from 'node:fs';
import client from 'prom-client';
import type { Awaitable, ReadStore } from '../ports/index.js';
import type { FileWaiting } from '../ports/reads.js';
import type { ProviderClient } from '../provider/client.js';
import { NODES_SEEN_WITHIN_MS } from '../report/status.js';
import type { RateLimiter } from '../send/rate.js';

export interface MetricsSource {
  reads: ReadStore;
  /** The files this process is reading or sending now (ids). */
  inProgress: { has(id: number): boolean; readonly size: number };
  /** The code of the pause (E_...) while sending is paused, else undefined. */
  pausedCode(): string | undefined;
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
  client.collectDefaultMetrics({ register: registry });
  // Gauges named like counters (promtool check metrics refuses them): the sums of
  // nodejs_active_handles{type} and the like, which stay.
  for (const name of ['handles', 'requests', 'resources'])
    registry.removeSingleMetric(`nodejs_active_${name}_total`);
  buildInfo(registry);
  journalCounters(registry, source.reads);
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

/** `smsdrop_build_info{version,node} 1`: which smsdrop and Node answer. */
function buildInfo(registry: client.Registry): void {
  // package.json sits two folders above both src/http/ and dist/http/.
  const { version } = JSON.parse(
    readFileSync(new URL('../../package.json', import.meta.url), 'utf8'),
  ) as { version: string };
  new client.Gauge({
    name: 'smsdrop_build_info',
    help: 'The smsdrop version and the Node.js version running it (always 1).',
    labelNames: ['version', 'node'],
    registers: [registry],
  }).set({ version, node: process.version }, 1);
}

/**
 * Totals since the journal began, read from it when scraped: they never go down, a restart or a
 * prune included (a pruned file's share is kept in pruned_totals).
 */
function journalCounters(registry: client.Registry, reads: ReadStore): void {
  counter(
    registry,
    'smsdrop_numbers_total',
    'Numbers with an outcome, by outcome and provider status code.',
    ['outcome', 'code'],
    () => reads.numbersByOutcome(),
    (c, numbers) => {
      for (const n of numbers) c.inc({ outcome: n.outcome, code: n.code }, n.numbers);
    },
  );
  counter(
    registry,
    'smsdrop_requests_total',
    'Requests to the provider that got an outcome, by outcome (those in flight: smsdrop_requests_in_flight).',
    ['outcome'],
    () => reads.requestsByOutcome(),
    (c, requests) => {
      for (const r of requests) c.inc({ outcome: r.outcome }, r.requests);
    },
  );
}

/** Gauges whose values are read from the journal when scraped. */
function journalGauges(registry: client.Registry, source: MetricsSource): void {
  const { reads, inProgress } = source;
  gauge(
    registry,
    'smsdrop_rows',
    'Rows of every file, by status.',
    ['status'],
    () => reads.rowsByStatus(),
    (g, rows) => {
      for (const [status, count] of Object.entries(rows)) g.set({ status }, count);
    },
  );
  gauge(
    registry,
    'smsdrop_files',
    'Files in the journal, by status ("stopped": reading or sending stopped part-way, none of this process\'s files in progress).',
    ['status'],
    async () => ({
      byStatus: await reads.filesByStatus(),
      unfinished: await reads.unfinishedFileLines(),
    }),
    (g, { byStatus, unfinished }) => {
      for (const f of byStatus) g.inc({ status: f.status }, f.files);
      // A file that stopped part-way (its last status write failed on a full disk, or an earlier
      // run ended) is not being read or sent, whatever its journal status says.
      for (const f of unfinished)
        if (!inProgress.has(f.id)) {
          g.dec({ status: f.status }, 1);
          g.inc({ status: 'stopped' }, 1);
        }
    },
  );
  gauge(
    registry,
    'smsdrop_files_waiting',
    'Unfinished files that send nothing until their operator acts or their time comes, by reason: held (for approval), scheduled (a start time ahead), paused.',
    ['reason'],
    () => reads.filesWaiting(new Date().toISOString()),
    (g, waiting) => {
      // every reason, 0 included: an alert on one needs its series there
      for (const reason of WAITING_REASONS) g.set({ reason }, 0);
      for (const w of waiting) g.set({ reason: w.waiting }, Number(w.files));
    },
  );
  nodeGauges(registry, reads);
  processGauges(registry, source);
}

const WAITING_REASONS: readonly FileWaiting[] = ['held', 'scheduled', 'paused'];

/** The daemons sharing a PostgreSQL journal (none with SQLite): seen when, holding what. */
function nodeGauges(registry: client.Registry, reads: ReadStore): void {
  // Both gauges show one read of the nodes: prom-client collects a scrape's metrics at once.
  const nodes = sharedWhilePending(() => reads.nodes(NODES_SEEN_WITHIN_MS));
  gauge(
    registry,
    'smsdrop_node_last_seen_timestamp_seconds',
    'When each daemon sharing the journal (PostgreSQL) last renewed its leases, in Unix seconds.',
    ['node'],
    nodes,
    (g, seen) => {
      for (const n of seen) g.set({ node: n.id }, Date.parse(n.lastSeen) / 1000);
    },
  );
  gauge(
    registry,
    'smsdrop_node_batches_held',
    'Batches each daemon sharing the journal (PostgreSQL) holds under its lease.',
    ['node'],
    nodes,
    (g, seen) => {
      for (const n of seen) g.set({ node: n.id }, n.batchesHeld);
    },
  );
}

/** `read`, whose answer goes to every caller that asks while it is under way (one scrape's). */
function sharedWhilePending<T>(read: () => Awaitable<T>): () => Promise<T> {
  let pending: Promise<T> | undefined;
  return () => {
    pending ??= Promise.resolve(read()).finally(() => {
      pending = undefined;
    });
    return pending;
  };
}

/** Gauges of this process and of the journal's size, not of the journal's records. */
function processGauges(registry: client.Registry, source: MetricsSource): void {
  const now = () => undefined;
  gauge(registry, 'smsdrop_files_in_progress', 'Files being read or sent now.', [], now, (g) =>
    g.set(source.inProgress.size),
  );
  gauge(
    registry,
    'smsdrop_paused',
    'Sending paused (1, reason: its code, docs/errors.md), or not (0).',
    ['reason'],
    now,
    (g) => {
      const code = source.pausedCode();
      g.set({ reason: code ?? '' }, code ? 1 : 0);
    },
  );
  gauge(
    registry,
    'smsdrop_journal_bytes',
    "The journal's size: SQLite's files on disk (WAL and intents included), PostgreSQL's database.",
    [],
    () => source.reads.size(),
    (g, size) => g.set(size.bytes),
  );
}

/**
 * A gauge set afresh at each scrape (reset first: a label that is gone does not linger). What it
 * shows is read first, then reset and set in one go, so two scrapes at once cannot add up.
 */
function gauge<T>(
  registry: client.Registry,
  name: string,
  help: string,
  labelNames: string[],
  read: () => Awaitable<T>,
  fill: (g: client.Gauge, data: T) => void,
): void {
  new client.Gauge({
    name,
    help,
    labelNames,
    registers: [registry],
    async collect() {
      const data = await read();
      this.reset();
      fill(this, data);
    },
  });
}

/** A counter set afresh at each scrape from totals the journal keeps (as a gauge is). */
function counter<T>(
  registry: client.Registry,
  name: string,
  help: string,
  labelNames: string[],
  read: () => Awaitable<T>,
  fill: (c: client.Counter, data: T) => void,
): void {
  new client.Counter({
    name,
    help,
    labelNames,
    registers: [registry],
    async collect() {
      const data = await read();
      this.reset();
      fill(this, data);
    },
  });
}
