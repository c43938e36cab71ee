// The simulator's public vocabulary: options, fault rules and what it remembers of accepted
// requests. index.ts re-exports all of it; other modules import from here to avoid an import cycle.

/** A request the simulator has received and not yet answered or lost. */
export interface InFlightRequest {
  /** When it was received (ISO 8601). */
  since: string;
  /** Its reqId, once its body is decoded (null: none, not decoded yet, or not decodable). */
  reqId: string | null;
  /** The fault chosen for it, if any. */
  fault: FaultKind | null;
}

export type FaultKind = 'http500' | 'status' | 'cut-after-accept' | 'cut-before-accept' | 'stall';

/**
 * One fault: applies to a request with `probability` (seeded PRNG) or to every `everyNth` request.
 */
export interface FaultRule {
  kind: FaultKind;
  /** Only for kind 'status': the 6-character statusCode answered instead of processing. */
  statusCode?: string;
  probability?: number;
  everyNth?: number;
}

export interface SimulatorOptions {
  /** Default 127.0.0.1. */
  host?: string;
  /** 0 (default) = any free port. */
  port?: number;
  https?: boolean;
  /** With https: where to write the CA certificate (PEM). */
  caFile?: string;
  /**
   * With https: the key and certificate (PEM) to serve instead of a self-signed one made at start
   * (an expired one, another host's, one of an unknown CA: to test a client's refusals).
   */
  certificate?: { key: string; cert: string };
  accountSid: string;
  authToken: string;
  appIds: string[];
  /** templateId -> number of variables. */
  templates: Record<string, number>;
  /** Delay before answering, uniform in [min, max] ms. */
  latencyMs?: [number, number];
  /** Numbers answered with 160034 (blacklisted). */
  blocked?: string[];
  /** Numbers over their daily cap: a request holding one is answered 160040, as a whole. */
  capped?: string[];
  /**
   * Numbers answered with a status code of choice: a request holding one is answered that code,
   * as a whole (any code of the tables: 111115 IP not whitelisted, 160070, 160071...).
   */
  numberCodes?: Record<string, string>;
  /**
   * Numbers per request above which 160048 is answered (default 200; older docs and the Java SDK
   * say 100).
   */
  maxNumbers?: number;
  faults?: FaultRule[];
  /**
   * How long a stalled request (the `stall` fault) is held before it is answered HTTP 504, as a
   * gateway in front of the service would. Default: held until the client closes it.
   */
  stallMs?: number;
  /**
   * JSON lines, one per accepted request; appended, and read back at start to remember today's
   * reqIds.
   */
  recordFile?: string;
  /**
   * Keep accepted requests in `records` (default true). Off for a long-running built-in simulator,
   * whose memory must not grow.
   */
  keepRecords?: boolean;
  /** Seed of the PRNG behind probabilistic faults. Default: random. */
  seed?: number;
  /** Clock, for tests. Default: the real clock. */
  now?: () => Date;
  /** IANA zone in which timestamps and "today" are read. Default: the host's local zone. */
  timezone?: string;
}

export interface AcceptedRecord {
  /** ISO 8601, UTC. */
  time: string;
  smsMessageSid: string;
  appId: string;
  templateId: string;
  datas: string[];
  to: string[];
  reqId?: string;
}

export interface RunningSimulator {
  /** Base URL, e.g. http://127.0.0.1:41234 (no trailing slash). */
  url: string;
  /** With https: the self-signed certificate a client must trust. */
  caPem?: string;
  caFile?: string;
  /** Requests accepted by this run, in order ([] with keepRecords false). */
  records: AcceptedRecord[];
  /** How many requests this run accepted, kept records or not. */
  acceptedCount: number;
  /** Requests that reached the handler, whatever became of them. */
  requestCount: number;
  /**
   * The most requests in flight at once (received, not yet answered or cut): what a sender's
   * concurrency limit held, across all its processes.
   */
  peakInFlight: number;
  /**
   * The requests in flight when the peak was first reached, oldest first: what to look up in the
   * sender's journal (by reqId) when the peak passed its limit.
   */
  peakRequests: readonly InFlightRequest[];
  /** Stops listening, drops every connection (stalled and keep-alive too); safe to call twice. */
  close(): Promise<void>;
}
