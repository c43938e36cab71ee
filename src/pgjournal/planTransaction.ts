// The PostgreSQL plan store's transaction: held open across chunks on one connection of the pool,
// its steps run one after another. A step that fails rolls it back: what it held since the last
// commit is lost, and every later step fails too (the intake stops; the file is refused). Within an
// intake turn (intakeTurn.ts) the transactions run on the turn's connection, which they never
// release: the turn's lock and what it commits share one connection's fate.
import type pg from 'pg';
import { SmsdropError } from '../errors.js';

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
  #client: pg.PoolClient | undefined;
  #busy: Promise<void> = Promise.resolve();
  #lost = false;

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
    return this.#lost;
  }

  lostError(): SmsdropError {
    return new SmsdropError(
      'E_JOURNAL_WRITE',
      `the PostgreSQL journal rolled back rows of file ${this.#fileId} it was writing (the connection or the server failed)`,
    );
  }

  /** Runs `step` in the transaction (begun if none is open), after the steps before it. */
  run(step: (db: pg.ClientBase) => Promise<void>): Promise<void> {
    const run = this.#busy.then(async () => {
      if (this.#lost) throw this.lostError();
      try {
        await step(await this.#open());
      } catch (error) {
        this.#lost = true;
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
    const client = this.#client;
    if (!client) return false;
    await this.#beforeCommit?.(client);
    await client.query('COMMIT');
    this.#client = undefined;
    this.#letGo(client);
    return true;
  }

  async #open(): Promise<pg.PoolClient> {
    if (this.#client) return this.#client;
    const client = this.#turn ?? (await this.#pool.connect());
    // A connection the server ends while held reports it here as well as to the query under way:
    // unheard, it would end the process.
    if (!this.#turn) client.on('error', ignore);
    try {
      await client.query('BEGIN');
    } catch (error) {
      this.#letGo(client, true);
      throw error;
    }
    this.#client = client;
    return client;
  }

  /** After a failure: the transaction is gone (rolled back, or with its connection). */
  #end(): void {
    const client = this.#client;
    this.#client = undefined;
    if (!client) return;
    client.query('ROLLBACK').then(
      () => this.#letGo(client),
      () => this.#letGo(client, true),
    );
  }

  /** Back to the pool (`broken`: closed), unless it is the turn's, which the turn's end lets go. */
  #letGo(client: pg.PoolClient, broken = false): void {
    if (client === this.#turn) return;
    client.off('error', ignore);
    client.release(broken);
  }
}

function ignore(): void {}
