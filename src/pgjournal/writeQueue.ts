// The sender's writes on the PostgreSQL journal, one transaction per turn of the event loop, as
// SQLite's write queue (src/journal/writeQueue.ts): every attempt and outcome asked for during one
// turn runs in one transaction on one connection, and each caller's promise settles once that
// transaction has committed, so a request still leaves only once its attempt is in the journal.
//
// Turns are committed one after another: the writes of a turn that comes while one commits wait
// for the next transaction (and join the writes of the turns after it).
//
// A write that finds its batch no longer answers to it (another node took it over) throws a
// SmsdropError before it writes anything (send moves are written that way, sendMoves.ts): that
// write alone fails, the others of the turn commit. A turn PostgreSQL rolls back to break a
// deadlock or a serialization conflict is tried again. Any other error (a failed statement, a lost
// connection, a failed COMMIT) rolls the whole turn back, and every write of it fails.
import { setTimeout as sleep } from 'node:timers/promises';
import type pg from 'pg';
import { SmsdropError } from '../errors.js';
import { withTransaction } from './smallTransaction.js';

/** One write of a turn: its statements, on the turn's connection inside its transaction. */
export type TurnWrite<T> = (db: pg.PoolClient) => Promise<T>;

interface Job {
  write: TurnWrite<unknown>;
  resolve: (value: unknown) => void;
  reject: (error: unknown) => void;
}

export class TurnQueue {
  readonly #pool: pg.Pool;
  #jobs: Job[] = [];
  #committing: Promise<void> = Promise.resolve();

  constructor(pool: pg.Pool) {
    this.#pool = pool;
  }

  /** Runs `write` in this turn's transaction; resolves once that has committed. */
  run<T>(write: TurnWrite<T>): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      if (this.#jobs.length === 0) setImmediate(() => this.#flush());
      this.#jobs.push({ write, resolve: resolve as (value: unknown) => void, reject });
    });
  }

  /** Writes asked for that have not started their transaction yet. */
  waiting(): boolean {
    return this.#jobs.length > 0;
  }

  /** Resolves once every write asked for so far has settled. */
  async idle(): Promise<void> {
    while (this.#jobs.length > 0) await new Promise((resolve) => setImmediate(resolve));
    await this.#committing;
  }

  #flush(): void {
    this.#committing = this.#committing.then(async () => {
      const batch = this.#jobs;
      this.#jobs = [];
      if (batch.length > 0) await commitTurn(this.#pool, batch);
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

/** The turn's writes in one transaction: how each settled, once committed; throws on a rollback. */
async function tryTurn(pool: pg.Pool, batch: Job[]): Promise<Settled[]> {
  return withTransaction(pool, async (client) => {
    const settled: Settled[] = [];
    for (const job of batch) {
      try {
        settled.push({ ok: true, value: await job.write(client) });
      } catch (error) {
        // Refused before it wrote (see the top of this file); anything else fails the turn.
        if (!(error instanceof SmsdropError)) throw error;
        settled.push({ ok: false, error });
      }
    }
    return settled;
  });
}
