// Every transaction of the PostgreSQL journal goes through here: a client of the pool, BEGIN, the
// work, COMMIT, or ROLLBACK on any error (BEGIN's, the work's, COMMIT's: that error is thrown on).
// The release rule is written once, in `Transaction.#end`: a client whose transaction ended in a
// COMMIT or a ROLLBACK goes back to the pool; a client whose ROLLBACK failed has a broken
// connection, and is released with that error, which makes the pool close it rather than lend it
// again.
//
// `withTransaction` is the whole round for a piece of work; `Transaction` is the same round in
// steps, for the plan store's transaction held open across chunks (bulk.ts).
import type pg from 'pg';
import { SmsdropError } from '../errors.js';
import type { Queryable } from './claims.js';

/** A pool or one of its clients (inside a transaction). */
export type { Queryable };

export interface BeginOptions {
  /**
   * BEGIN goes on the wire with the work's first statements instead of a round trip ahead of them
   * (the pool's connections are in pipeline mode: schema.ts, openPool). Its answer is awaited
   * before COMMIT, which it fails (rolled back) if BEGIN failed. Only a broken connection fails a
   * BEGIN sent to an idle one, and then every statement after it fails too.
   */
  pipelined?: boolean;
}

/** Runs `work` in a transaction on a client of `pool`; its value once committed. */
export async function withTransaction<T>(
  pool: pg.Pool,
  work: (client: pg.PoolClient) => Promise<T>,
): Promise<T> {
  const transaction = await Transaction.begin(pool);
  let value: T;
  try {
    value = await work(transaction.client);
  } catch (error) {
    await transaction.rollBack();
    throw error;
  }
  await transaction.commit();
  return value;
}

/** One open transaction on a client of the pool (or on a client lent by whoever holds it). */
export class Transaction {
  readonly client: pg.PoolClient;
  /** The client is lent (an intake turn's): its holder releases it, never this transaction. */
  readonly #lent: boolean;
  /** A pipelined BEGIN's answer, awaited by commit (BeginOptions). */
  #begun: Promise<unknown> = Promise.resolve();
  /** A COMMIT sent ahead of `commit` (sendCommit), whose answer `commit` awaits. */
  #committing: Promise<pg.QueryResult> | undefined;
  #ended = false;

  private constructor(client: pg.PoolClient, lent: boolean) {
    this.client = client;
    this.#lent = lent;
  }

  /**
   * Begins a transaction on a client of `pool`, or on `lent` (which stays with its holder, who
   * hears its errors).
   */
  static async begin(
    pool: pg.Pool,
    lent?: pg.PoolClient,
    { pipelined = false }: BeginOptions = {},
  ): Promise<Transaction> {
    const client = lent ?? (await pool.connect());
    // A connection the server ends while it is held reports it here as well as to the query under
    // way: unheard, the event would end the process.
    if (!lent) client.on('error', ignore);
    const transaction = new Transaction(client, lent !== undefined);
    const begun = client.query('BEGIN');
    if (pipelined) {
      begun.catch(ignore); // heard by commit
      transaction.#begun = begun;
      return transaction;
    }
    try {
      await begun;
    } catch (error) {
      await transaction.rollBack();
      throw error;
    }
    return transaction;
  }

  /**
   * Puts COMMIT on the wire now, behind the statements sent so far; `commit` awaits its answer.
   * What the work sends after it runs outside the transaction, each statement alone: only for work
   * whose writes are all sent by now (writeQueue.ts, a turn of attempts).
   */
  sendCommit(): void {
    this.#committing ??= this.client.query('COMMIT');
    this.#committing.catch(ignore); // heard by commit
  }

  /**
   * Commits and lets the client go; a failed COMMIT, or one PostgreSQL answered ROLLBACK (a
   * statement of the transaction had failed), rolls back (as `rollBack`) and throws.
   */
  async commit(): Promise<void> {
    this.sendCommit();
    try {
      await this.#begun;
      const { command } = await this.#committing!;
      if (command !== 'COMMIT')
        throw new SmsdropError('E_JOURNAL_WRITE', `PostgreSQL answered COMMIT with ${command}`);
    } catch (error) {
      await this.rollBack();
      throw error;
    }
    this.#end();
  }

  /** Rolls back and lets the client go (closed, if ROLLBACK failed). Never throws. */
  async rollBack(): Promise<void> {
    if (this.#ended) return;
    let broken: Error | undefined;
    await this.client.query('ROLLBACK').catch((rollback: Error) => {
      broken = rollback;
    });
    this.#end(broken);
  }

  /** The release rule: back to the pool, or closed when `broken`; a lent client stays lent. */
  #end(broken?: Error): void {
    if (this.#ended) return;
    this.#ended = true;
    if (this.#lent) return;
    this.client.off('error', ignore);
    this.client.release(broken);
  }
}

function ignore(): void {}
