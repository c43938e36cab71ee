// SendStore on the PostgreSQL journal, for one node of a cluster: the file's due batches claimed
// under this node's lease (claims.ts), each attempt committed before its request leaves and only
// while the lease holds with a margin to spare (leases.ts), each outcome written only while the
// batch is still this node's and giving its lease up (sendMoves.ts), and batches a dead node left
// `sending` taken over (sendTakeover.ts). Writes go through a per-turn transaction, as SQLite's
// (writeQueue.ts). Why this sends each message once across nodes: docs/postgres.md.
import type pg from 'pg';
import { SmsdropError } from '../errors.js';
import { MoveRefusedError } from '../journalRules/moves.js';
import type { AttemptStart, DueQuery, Outcome, SendStore, TakeOver } from '../ports/send.js';
import type { AttemptHistory, BatchToSend, Transition } from '../ports/records.js';
import { claimDueBatches, releaseLeasesExcept, releasePlannedLeases } from './claims.js';
import { LeaseKeeper, type LeaseSettings } from './leases.js';
import { applyTransition, finishAttempt, startAttempt } from './sendMoves.js';
import { PG_DIALECT, runRule } from './rules.js';
import { TurnQueue } from './writeQueue.js';
import { attemptHistory, filesWithWork, nextDueAt, recentStarts } from './sendReads.js';
import { providerSilentFor } from '../journalRules/providerSilence.js';
import { anyAbandoned, takeOverAbandoned } from './sendTakeover.js';

export interface PgSendStoreOptions extends LeaseSettings {
  /** SMSDROP_REQID: abandoned batches taken over go back under their reqId (on) or end unknown. */
  reqIdOn: boolean;
  /**
   * Batches a claim leases at most, whatever the sender asks for (it asks for a page of 100 and
   * more): a node leases what it will send soon, and leaves the rest to the other nodes. Default:
   * what the sender asks; twice SMSDROP_CONCURRENCY is what a node keeps queued.
   */
  maxClaim?: number;
}

/**
 * How soon a file whose last batches another node holds is looked at again: that node is helping
 * (daemon/helpOtherNodes.ts) and its requests end within the provider's latency, so the file is
 * finished (or a batch comes back to be sent) well before any lease would pass.
 */
const HELD_ELSEWHERE_LOOK_MS = 500;

/** An attempt committed too late to be sent (its lease was about to pass): not sent after all. */
const UNSENT: { transition: Transition; reason: string } = {
  reason: 'not sent: the lease of this node was about to pass when the attempt was recorded',
  transition: {
    to: 'planned',
    nextAttemptAt: 0,
    doubt: 0,
    refundAttempt: true,
    statusCode: null,
    statusMsg: 'not sent: the lease of this node was about to pass; sent again later',
  },
};

export class PgSendStore implements SendStore {
  readonly #pool: pg.Pool;
  readonly #keeper: LeaseKeeper;
  readonly #queue: TurnQueue;
  readonly #reqIdOn: boolean;
  readonly #maxClaim: number;
  /** Batches whose attempt this process may have committed and whose outcome it has not. */
  readonly #inFlight = new Set<number>();
  /** Attempts committed too late to send, whose putting back has not committed yet. */
  readonly #unsent = new Map<number, number>();
  /** Told what this node gave up of a batch another node took over (handedOn). */
  #onHandedOn: (what: string) => void = () => {};
  /** Told of the batches this node took over from another (whenTakenOver). */
  #onTakenOver: (takeover: TakeOver) => void = () => {};

  constructor(pool: pg.Pool, options: PgSendStoreOptions) {
    this.#pool = pool;
    this.#keeper = new LeaseKeeper(pool, options);
    this.#queue = new TurnQueue(pool);
    this.#reqIdOn = options.reqIdOn;
    this.#maxClaim = options.maxClaim ?? Infinity;
  }

  get node(): string {
    return this.#keeper.lease.node;
  }

  /** Records the node and starts renewing its leases (call once, before sending). */
  start(): Promise<void> {
    return this.#keeper.start();
  }

  /**
   * Once the sender has stopped: waits for the writes asked for, stops renewing, and gives up
   * every lease but those of requests still in flight.
   */
  async close(): Promise<void> {
    await this.#queue.idle();
    await this.#keeper.stop([...this.#inFlight]);
  }

  async claimDueBatches(q: DueQuery): Promise<{ first: BatchToSend[]; due: BatchToSend[] }> {
    await this.#putBackUnsent();
    if (await anyAbandoned(this.#pool, q.fileId, this.node, this.#inFlight))
      await this.recoverInterrupted(q.fileId, this.#reqIdOn);
    const claimed = await claimDueBatches(this.#pool, this.#keeper.lease, {
      ...q,
      limit: Math.min(q.limit, this.#maxClaim),
    });
    this.#tellTakenOver(q.fileId, claimed.takenFrom);
    const all = [...claimed.first, ...claimed.due];
    this.#keeper.claimed(
      all.map((b) => b.batch.id),
      claimed.heldUntil,
    );
    return { first: claimed.first, due: claimed.due };
  }

  startAttempts(starts: readonly AttemptStart[]): Promise<(number | undefined)[]> {
    return Promise.all(starts.map((start) => this.#start(start)));
  }

  /** One attempt; joins this turn's transaction (queued before the first await). */
  async #start({ batch, reqId }: AttemptStart): Promise<number | undefined> {
    if (!this.#keeper.mayStart(batch.id) || this.#inFlight.has(batch.id)) return undefined;
    // In flight from before its transaction: a takeover running meanwhile must leave it alone.
    this.#inFlight.add(batch.id);
    let attemptId: number | undefined;
    try {
      attemptId = await this.#queue.run((db) => startAttempt(db, this.node, batch, reqId), {
        first: true,
        oneStatement: true,
      });
    } finally {
      if (attemptId === undefined) this.#inFlight.delete(batch.id);
    }
    if (attemptId === undefined) return undefined;
    // The commit may have taken long: the request must still leave before the lease can pass.
    if (this.#keeper.mayStart(batch.id)) return attemptId;
    this.#unsent.set(batch.id, attemptId);
    await this.#putBackUnsent();
    return undefined;
  }

  /** Attempts committed but never sent go back to planned, not counted (retried at each claim). */
  async #putBackUnsent(): Promise<void> {
    const unsent = [...this.#unsent];
    this.#unsent.clear();
    await Promise.all(
      unsent.map(([batchId, id]) =>
        this.#record({
          batchId,
          transition: UNSENT.transition,
          attempt: { id, result: { outcome: 'not-sent', statusCode: null, reason: UNSENT.reason } },
        }).catch((error: unknown) => {
          // Refused: taken over meanwhile, no longer this node's to put back. Else: next claim.
          if (!(error instanceof SmsdropError)) this.#unsent.set(batchId, id);
        }),
      ),
    );
  }

  async recordOutcomes(outcomes: readonly Outcome[]): Promise<void> {
    await Promise.all(outcomes.map((outcome) => this.#record(outcome)));
  }

  /**
   * One outcome in this turn's transaction; the batch is no longer in flight once it settles. One
   * the batch no longer answers to (another node took it over: this node was cut off or stopped
   * past its lease) is handed on, not failed: the batch is that node's, whose resend under the
   * same reqId gets the provider's own answer, and this node's file goes on with what the journal
   * says.
   */
  async #record(outcome: Outcome): Promise<void> {
    const { batchId, transition, attempt } = outcome;
    try {
      await this.#queue.run((db) =>
        attempt
          ? finishAttempt(db, this.node, attempt, batchId, transition)
          : applyTransition(db, this.node, batchId, transition),
      );
    } catch (error) {
      if (!(error instanceof MoveRefusedError)) throw error;
      this.#onHandedOn(handedOn(outcome, error));
    } finally {
      // Recorded, refused (taken over), or rolled back: in each case this process is done with
      // the request, and a batch still `sending` is taken over at the next claim (same reqId).
      this.#inFlight.delete(batchId);
      this.#keeper.released([batchId]);
    }
  }

  /** Gives up the leases of batches with no request in flight here, for the other nodes. */
  async handBack(): Promise<void> {
    this.#keeper.released(await releaseLeasesExcept(this.#pool, this.node, [...this.#inFlight]));
  }

  /**
   * Gives up the leases of these batches with no request in flight here that are still planned:
   * here first (no longer renewed, so they lapse if the journal cannot be told), then in the
   * journal, for the other nodes.
   */
  async releaseClaims(batchIds: readonly number[]): Promise<void> {
    const idle = batchIds.filter((id) => !this.#inFlight.has(id) && !this.#unsent.has(id));
    if (idle.length === 0) return;
    this.#keeper.released(idle);
    await releasePlannedLeases(this.#pool, this.node, idle);
  }

  /** By this node's monotonic clock: its lease of the batch holds for more than the margin. */
  mayStillStart(batchId: number): boolean {
    return this.#keeper.mayStart(batchId);
  }

  /** `listener` is told each outcome this node gave up because another node holds its batch. */
  whenHandedOn(listener: (what: string) => void): void {
    this.#onHandedOn = listener;
  }

  /** `listener` is told of each node's batches this node takes over once their lease passed. */
  whenTakenOver(listener: (takeover: TakeOver) => void): void {
    this.#onTakenOver = listener;
  }

  #tellTakenOver(fileId: number, takenFrom: ReadonlyMap<string, number>): void {
    for (const [from, batches] of takenFrom) this.#onTakenOver({ fileId, from, what: batches });
  }

  async recoverInterrupted(fileId: number, reqIdOn: boolean): Promise<number> {
    const { ids, takenFrom } = await takeOverAbandoned(
      this.#pool,
      fileId,
      this.node,
      this.#inFlight,
      reqIdOn,
    );
    this.#tellTakenOver(fileId, takenFrom);
    return ids.length;
  }

  nextDueAt(fileId: number): Promise<number | null> {
    const lookAgainMs = Math.min(Math.floor(this.#keeper.lease.ms / 3), HELD_ELSEWHERE_LOOK_MS);
    return nextDueAt(this.#pool, fileId, this.node, Date.now(), lookAgainMs);
  }

  attemptHistory(batchId: number, reqId: string): Promise<AttemptHistory> {
    return attemptHistory(this.#pool, batchId, reqId);
  }

  providerSilentFor(batchId: number, attempts: number): Promise<boolean> {
    return runRule(this.#pool, providerSilentFor(PG_DIALECT, batchId, attempts, this.node));
  }

  recentStarts(sinceMs: number): Promise<{ at: number; numbers: number }[]> {
    return recentStarts(this.#pool, sinceMs);
  }

  writesPending(): boolean {
    return this.#queue.waiting();
  }

  filesWithWork(limit: number): Promise<number[]> {
    return filesWithWork(this.#pool, Date.now(), limit);
  }
}

/** What a node gave up of a batch it lost, for its log. */
function handedOn({ batchId, transition, attempt }: Outcome, refusal: Error): string {
  const answer = attempt ? `, its request answered ${attempt.result.outcome}` : '';
  return `gave up batch ${batchId}'s outcome (${transition.to}${answer}), handed on: ${refusal.message}`;
}

/** The PostgreSQL SendStore of node `options.node`, its lease keeper started. */
export async function pgSendStore(
  pool: pg.Pool,
  options: PgSendStoreOptions,
): Promise<PgSendStore> {
  const store = new PgSendStore(pool, options);
  await store.start();
  return store;
}
