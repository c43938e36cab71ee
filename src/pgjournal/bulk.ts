// The PostgreSQL plan store's transaction: held open across chunks on one connection of the pool,
// its steps run one after another. A step that fails rolls it back: what it held since the last
// commit is lost, and every later step fails too (the intake stops; the file is refused). Within an
// intake turn (intakeTurn.ts) the transactions run on the turn's connection, which they never
// release: the turn's lock and what it commits share one connection's fate.
import type pg from 'pg';
import { SmsdropError } from '../errors.js';
import { Transaction } from './smallTransaction.js';

/**
 * Runs in the transaction just before each COMMIT, after every write of it: throwing refuses the
 * commit (the transaction is rolled back and lost, as any failed step; the error is kept as the
 * cause of what the step throws).
 */
export type BeforeCommit = (db: pg.ClientBase) => Promise<void>;

export class IntakeTransaction {
  readonly #pool: pg.Pool;
  readonly #fileId: number;
  /** The intake turn's connection, kept between transactions; else one from the pool for each. */
  readonly #turn: pg.PoolClient | undefined;
  readonly #beforeCommit: BeforeCommit | undefined;
  #open: Transaction | undefined;
  #busy: Promise<void> = Promise.resolve();
  /** The failure that rolled the transaction back, once one did. */
  #lostBy: { cause: unknown } | undefined;

  constructor(
    pool: pg.Pool,
    fileId: number,
    options: { turn?: pg.PoolClient | undefined; beforeCommit?: BeforeCommit | undefined } = {},
  ) {
    this.#pool = pool;
    this.#fileId = fileId;
    this.#turn = options.turn;
    this.#beforeCommit = options.beforeCommit;
  }

  /** True once a step failed: the rows written since the last commit are gone. */
  get lost(): boolean {
    return this.#lostBy !== undefined;
  }

  /**
   * What a step after the failure throws. It carries the failure as its cause, so that a lost
   * connection still reads as the server gone (isDatabaseOutage) and the file is read again
   * rather than refused.
   */
  lostError(): SmsdropError {
    return new SmsdropError(
      'E_JOURNAL_WRITE',
      `the PostgreSQL journal rolled back rows of file ${this.#fileId} it was writing (the connection or the server failed)`,
      { cause: this.#lostBy?.cause },
    );
  }

  /** Runs `step` in the transaction (begun if none is open), after the steps before it. */
  run(step: (db: pg.ClientBase) => Promise<void>): Promise<void> {
    const run = this.#busy.then(async () => {
      if (this.#lostBy) throw this.lostError();
      try {
        await step(await this.#begin());
      } catch (error) {
        this.#lostBy = { cause: error };
        this.#end();
        throw new SmsdropError(
          'E_JOURNAL_WRITE',
          `the PostgreSQL journal could not record file ${this.#fileId}'s intake: ${(error as Error).message}`,
          { cause: error },
        );
      }
    });
    this.#busy = run.catch(() => undefined);
    return run;
  }

  /** Inside a step: commits the open transaction; false when none was open. */
  async commitOpen(): Promise<boolean> {
    const open = this.#open;
    if (!open) return false;
    await this.#beforeCommit?.(open.client);
    // A failed COMMIT rolls back and lets the client go itself: nothing is left for #end.
    this.#open = undefined;
    await open.commit();
    return true;
  }

  async #begin(): Promise<pg.ClientBase> {
    this.#open ??= await Transaction.begin(this.#pool, this.#turn);
    return this.#open.client;
  }

  /** After a failure: the transaction is gone (rolled back, or with its connection). */
  #end(): void {
    const open = this.#open;
    this.#open = undefined;
    void open?.rollBack();
  }
}
