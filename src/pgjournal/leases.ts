// This node's leases, kept alive: renewed every lease/3 (claims.ts, renewLeases), each batch's
// `heldUntil` known on the node's own monotonic clock (performance.now()), so that the node stops
// starting requests before any lease of its can pass to another node.
//
// The margin. A request may leave only while its batch's lease holds, so that no other node can
// have taken the batch over yet (sendTakeover.ts). The database sets a lease's expiry after the
// node took `heldUntil` (claims.ts), so the lease cannot pass before `heldUntil` on the node's
// clock. An attempt is therefore started only when `heldUntil − margin` has not passed, checked
// before its transaction and again once it has committed, and the margin must be longer than the
// longest time from that second check to the request's bytes leaving: the event loop's delay plus
// the provider connection's connect timeout (SMSDROP_CONNECT_TIMEOUT_MS, 5 s by default; a request
// waits for no connection beyond that, the client has one per allowed request). The default margin
// is lease/3 (10 s of the default 30 s lease), or the connect timeout plus a second if longer
// (leaseMargin), and it must stay under 2·lease/3: renewals come
// every lease/3, so a node that renews normally always holds more than that. A node that cannot
// renew (its database unreachable, slow) thus stops starting requests after about two missed
// renewals, and resumes at the first renewal that succeeds.
import { performance } from 'node:perf_hooks';
import type pg from 'pg';
import { SmsdropError } from '../errors.js';
import { type Lease, releaseLeasesExcept, renewLeases } from './claims.js';
import { registerNode } from './nodes.js';

/** SMSDROP_LEASE's default. */
export const DEFAULT_LEASE_MS = 30_000;

export interface LeaseSettings {
  /** This node's id (SMSDROP_NODE_ID; host:pid by default, nodes.ts). */
  node: string;
  /** How long a claim or renewal lasts (SMSDROP_LEASE). */
  leaseMs: number;
  /** No attempt starts within this of a lease's end (default: leaseMargin; under 2·lease/3). */
  marginMs?: number;
  /** SMSDROP_CONNECT_TIMEOUT_MS, which the default margin must outlast. */
  connectTimeoutMs?: number;
}

/** What the event loop may add to a connect timeout before a request's bytes leave. */
const LOOP_SLACK_MS = 1_000;

/**
 * The default margin: a third of the lease, or more where the connect timeout needs it (the
 * constructor refuses a margin of 2·lease/3 or more: a lease that short for that timeout).
 */
export function leaseMargin(leaseMs: number, connectTimeoutMs?: number): number {
  const third = Math.floor(leaseMs / 3);
  return connectTimeoutMs === undefined ? third : Math.max(third, connectTimeoutMs + LOOP_SLACK_MS);
}

export class LeaseKeeper {
  readonly lease: Lease;
  readonly marginMs: number;
  readonly #pool: pg.Pool;
  /** The batches this node holds, each with the monotonic time before which its lease holds. */
  readonly #held = new Map<number, number>();
  #timer: NodeJS.Timeout | undefined;
  #renewing: Promise<void> | undefined;
  /** The last renewal's error, until one succeeds (for status and logs). */
  lastError: unknown;

  constructor(pool: pg.Pool, settings: LeaseSettings) {
    const marginMs = settings.marginMs ?? leaseMargin(settings.leaseMs, settings.connectTimeoutMs);
    if (!(settings.leaseMs > 0) || !(marginMs >= 0) || marginMs >= (settings.leaseMs * 2) / 3)
      throw new SmsdropError(
        'E_INTERNAL',
        `a lease of ${settings.leaseMs} ms cannot have a margin of ${marginMs} ms (under two thirds of the lease): lengthen SMSDROP_LEASE, or shorten SMSDROP_CONNECT_TIMEOUT_MS`,
      );
    this.#pool = pool;
    this.lease = { node: settings.node, ms: settings.leaseMs };
    this.marginMs = marginMs;
  }

  /** Records the node (nodes.ts) and renews its leases every lease/3 until stop(). */
  async start(): Promise<void> {
    await registerNode(this.#pool, this.lease.node);
    this.#timer ??= setInterval(() => void this.renew(), Math.max(1, this.lease.ms / 3));
    this.#timer.unref();
  }

  /**
   * Stops renewing, and gives up every lease of the node but those of `keep` (requests still in
   * flight: their batches stay this node's until their outcome, or until their lease passes).
   */
  async stop(keep: readonly number[]): Promise<void> {
    clearInterval(this.#timer);
    this.#timer = undefined;
    await this.#renewing;
    await releaseLeasesExcept(this.#pool, this.lease.node, keep);
    this.released([...this.#held.keys()].filter((id) => !keep.includes(id)));
  }

  /** A claim leased these batches, each until at least `heldUntil`. */
  claimed(batchIds: Iterable<number>, heldUntil: number): void {
    for (const id of batchIds) this.#held.set(id, Math.max(heldUntil, this.#held.get(id) ?? 0));
  }

  /** These leases were given up (with their outcome) or lost. */
  released(batchIds: Iterable<number>): void {
    for (const id of batchIds) this.#held.delete(id);
  }

  /** Whether a request for this batch may still start: its lease holds for more than the margin. */
  mayStart(batchId: number): boolean {
    const until = this.#held.get(batchId);
    return until !== undefined && performance.now() < until - this.marginMs;
  }

  /** The monotonic time before which this batch's lease holds (undefined: not held). */
  heldUntil(batchId: number): number | undefined {
    return this.#held.get(batchId);
  }

  /**
   * Renews every lease of the node that has not passed and that it still holds here. A batch the
   * database no longer has under the node's lease is dropped, unless a claim newer than this
   * renewal leased it (the renewal may not have seen that claim commit). One locked by a write
   * keeps the time it had.
   */
  renew(): Promise<void> {
    this.#renewing ??= (async () => {
      try {
        // Only what this process still holds: a claim it gave up here lapses even if the journal
        // was not told (releaseClaims), instead of being kept from the other nodes while it lives.
        const kept = [...this.#held.keys()];
        const { held, busy, heldUntil } = await renewLeases(this.#pool, this.lease, kept);
        const still = new Set(held);
        const locked = new Set(busy);
        for (const [id, until] of this.#held) {
          if (still.has(id)) this.#held.set(id, Math.max(until, heldUntil));
          else if (!locked.has(id) && until <= heldUntil) this.#held.delete(id);
        }
        this.lastError = undefined;
      } catch (error) {
        this.lastError = error; // the next tick tries again; mayStart runs out meanwhile
      } finally {
        this.#renewing = undefined;
      }
    })();
    return this.#renewing;
  }
}
