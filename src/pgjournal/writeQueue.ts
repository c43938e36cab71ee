// The sender's writes on the PostgreSQL journal, grouped into shared transactions as SQLite's
// write queue groups them (src/journal/writeQueue.ts): the writes asked for during one turn of the
// event loop run in one transaction on one connection, and each caller's promise settles once that
// transaction has committed, so a request still leaves only once its attempt is in the journal.
//
// Two lanes: a turn's attempts (the writes a request waits for before it leaves) go in a
// transaction of their own, its outcomes (whose answers are in) in another. Up to MAX_OPEN
// transactions of each lane run at once, each on its own connection: a turn's writes start as
// soon as one is free instead of waiting behind the commit under way, so a request's journal time
// is its own transaction's round trips, never an outcome's. The writes of a turn that comes while
// its lane is full wait for one to end (and join the writes of the turns after it). The writes of
// one turn touch other batches than those of the transactions running beside it (a batch's
// outcome is asked for only once its attempt committed); a deadlock between them on shared rows
// (a number's suppression) is tried again.
//
// A write that finds its batch no longer answers to it (another node took it over) throws a
// SmsdropError before it writes anything (send moves are written that way, sendMoves.ts): that
// write alone fails, the others of the turn commit. A turn PostgreSQL rolls back to break a
// deadlock or a serialization conflict is tried again. Any other error (a failed statement, a lost
// connection, a failed COMMIT) rolls the whole turn back, and every write of it fails.
import { setTimeout as sleep } from 'node:timers/promises';
import type pg from 'pg';
import { SmsdropError } from '../errors.js';
import { Transaction } from './smallTransaction.js';

/** One write of a turn: its statements, on the turn's connection inside its transaction. */
export type TurnWrite<T> = (db: pg.PoolClient) => Promise<T>;

interface Job {
  write: TurnWrite<unknown>;
  /** Its writing is one statement, sent at once; what it sends after that only reads (run). */
  oneStatement: boolean;
  resolve: (value: unknown) => void;
  reject: (error: unknown) => void;
}

/** Transactions of each lane (attempts, outcomes) open at once, each on a pool connection. */
const MAX_OPEN = 2;

/** Writes waiting for a transaction, and that lane's transactions open. */
interface Lane {
  jobs: Job[];
  open: number;
}

export class TurnQueue {
  readonly #pool: pg.Pool;
  /** Writes a request waits for before it leaves (its attempt), in transactions of their own. */
  readonly #first: Lane = { jobs: [], open: 0 };
  /** The other writes (outcomes: their answers are in). */
  readonly #rest: Lane = { jobs: [], open: 0 };
  #scheduled = false;
  #ended: (() => void)[] = [];

  constructor(pool: pg.Pool) {
    this.#pool = pool;
  }

  /**
   * Runs `write` in this turn's transaction; resolves once that has committed. `first`: a request
   * waits for it before it leaves, so it goes in a transaction of such writes alone, in a lane of
   * its own that the outcomes never fill. `oneStatement`: `write` writes with the first statement
   * it sends, at once, and what it sends after that only reads (an attempt: its move and its row in
   * one statement, test/pg/attemptStatement.test.ts); a turn of such writes sends its COMMIT with
   * them, so that it costs one round trip.
   */
  run<T>(write: TurnWrite<T>, { first = false, oneStatement = false } = {}): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      const job = { write, oneStatement, resolve: resolve as (value: unknown) => void, reject };
      (first ? this.#first : this.#rest).jobs.push(job);
      this.#schedule();
    });
  }

  /** Writes asked for that have not started their transaction yet. */
  waiting(): boolean {
    return this.#first.jobs.length > 0 || this.#rest.jobs.length > 0;
  }

  /** Resolves once every write asked for so far has settled. */
  async idle(): Promise<void> {
    while (this.waiting() || this.#first.open + this.#rest.open > 0)
      await new Promise<void>((resolve) => this.#ended.push(resolve));
  }

  /** The queued writes start at the end of this turn, if a transaction is free by then. */
  #schedule(): void {
    if (this.#scheduled || !this.waiting()) return;
    this.#scheduled = true;
    setImmediate(() => {
      this.#scheduled = false;
      this.#flush(this.#first);
      this.#flush(this.#rest);
    });
  }

  #flush(lane: Lane): void {
    if (lane.open >= MAX_OPEN || lane.jobs.length === 0) return;
    const batch = lane.jobs;
    lane.jobs = [];
    lane.open++;
    void commitTurn(this.#pool, batch).finally(() => {
      lane.open--;
      for (const ended of this.#ended.splice(0)) ended();
      this.#flush(lane);
    });
  }
}

type Settled = { ok: true; value: unknown } | { ok: false; error: unknown };

/** PostgreSQL ended the transaction to break a deadlock, or for a serialization conflict. */
const RETRIED_CODES = new Set(['40P01', '40001']);
/** Tries of a turn its transaction's conflicts roll back (each write is only SQL: re-runnable). */
const TURN_TRIES = 5;

/** One turn's writes in one transaction; each job settles after the COMMIT (or the rollback). */
async function commitTurn(pool: pg.Pool, batch: Job[]): Promise<void> {
  for (let tries = 1; ; tries++) {
    try {
      const settled = await tryTurn(pool, batch);
      batch.forEach((job, i) => {
        const result = settled[i]!;
        if (result.ok) job.resolve(result.value);
        else job.reject(result.error);
      });
      return;
    } catch (error) {
      const code = (error as { code?: unknown }).code;
      if (tries < TURN_TRIES && typeof code === 'string' && RETRIED_CODES.has(code)) {
        await sleep(5 + Math.random() * 20 * tries); // the other transaction finishes meanwhile
        continue;
      }
      for (const job of batch) job.reject(error);
      return;
    }
  }
}

/**
 * The turn's writes in one transaction, all at once on its connection (pipelined: each write's
 * statements go out without waiting for the others' answers, BEGIN with the first of them): how
 * each settled, once committed; throws on a rollback. COMMIT goes once every write has settled,
 * so that no write's statement comes after it, outside the transaction; or, in a turn of
 * one-statement writes (TurnQueue.run), right behind their statements, and then only a write's
 * reads can come after it.
 */
async function tryTurn(pool: pg.Pool, batch: Job[]): Promise<Settled[]> {
  const transaction = await Transaction.begin(pool, undefined, { pipelined: true });
  let failure: { error: unknown } | undefined;
  const settling = Promise.all(
    batch.map(async (job): Promise<Settled> => {
      try {
        return { ok: true, value: await job.write(transaction.client) };
      } catch (error) {
        // Refused before it wrote (see the top of this file); anything else fails the turn.
        // The first such error is the cause: the statements after it fail for it (25P02).
        if (!(error instanceof SmsdropError)) failure ??= { error };
        return { ok: false, error };
      }
    }),
  );
  const committedEarly = batch.every((job) => job.oneStatement);
  if (committedEarly) transaction.sendCommit();
  const settled = await settling;
  if (failure && !committedEarly) {
    await transaction.rollBack();
    throw failure.error;
  }
  try {
    await transaction.commit();
  } catch (error) {
    throw failure?.error ?? error; // rolled back: the cause, where a write failed before COMMIT
  }
  // Committed: a write that failed did so after it, in a read of its own, and fails alone.
  return settled;
}
