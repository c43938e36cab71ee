// The journal of one data directory as one object: its connection, its prepared statements, and
// every piece of state that lives as long as the connection (the write queue, the bulk
// transaction, the intents, the batches to send first, the files in progress, the intake turns).
// Each module that works on a piece keeps its meaning (bulk.ts, intents.ts, writeQueue.ts, …); the
// piece itself lives here, so it ends with the connection and no module keeps a map keyed by it.
import type Database from 'better-sqlite3';
import type { BulkState } from './bulk.js';
import type { IntentLog } from './intents.js';
import type { WriteQueue } from './writeQueue.js';

/** How a statement returns rows: objects, arrays of columns, or the first column alone. */
export type StatementMode = 'object' | 'raw' | 'pluck';

export class Journal {
  /** Prepared statements by mode and SQL text: preparing costs more than running. */
  readonly #statements = new Map<string, Database.Statement>();
  /** The open bulk transaction and its commits (bulk.ts). */
  readonly bulk: BulkState = { open: undefined, commits: 0, nextSize: undefined, losses: 0 };
  /** Requests made durable in the side file while a bulk transaction is open (intents.ts). */
  intents: IntentLog | undefined;
  /** The one write queue (writeQueue.ts), made on first use. */
  writeQueue: WriteQueue | undefined;
  /** Batches to send before the other due batches of their file (batches.ts sendFirst). */
  readonly firstToSend = new Set<number>();
  /** Journal records of files being processed now (the daemon runs several at once). */
  readonly filesInProgress = new Set<number>();
  /**
   * The end of the last intake's turn: intakes of one journal run one after the other (pipeline).
   */
  lastIntakeTurn: Promise<void> = Promise.resolve();
  /**
   * Webhook receivers (ids of their URLs) while the daemon sends webhooks: the journal's writes
   * that webhook events report then add the event to the outbox in their own transaction
   * (outbox.ts). Empty: no events are written.
   */
  webhookTargets: readonly string[] = [];
  /** Temporary tables made so far (each gets a name of its own). */
  #temporaryTables = 0;

  constructor(readonly connection: Database.Database) {}

  /**
   * The statement for `text` in `mode`, prepared once. Its mode is set here and never again: a
   * statement is shared by every caller of the same text, and one caller switching it would
   * change what the others read.
   */
  statement(mode: StatementMode, text: string): Database.Statement {
    const key = `${mode}\u0000${text}`;
    let statement = this.#statements.get(key);
    if (!statement) {
      statement = this.connection.prepare(text);
      if (mode === 'raw') statement.raw(true);
      else if (mode === 'pluck') statement.pluck(true);
      this.#statements.set(key, statement);
    }
    return statement;
  }

  /** A name for a temporary table no other of this journal has. */
  temporaryTableName(prefix: string): string {
    return `${prefix}_${++this.#temporaryTables}`;
  }

  get name(): string {
    return this.connection.name;
  }
  get inTransaction(): boolean {
    return this.connection.inTransaction;
  }
  get open(): boolean {
    return this.connection.open;
  }
  prepare(text: string): Database.Statement {
    return this.connection.prepare(text);
  }
  exec(text: string): this {
    this.connection.exec(text);
    return this;
  }
  pragma(text: string, options?: Database.PragmaOptions): unknown {
    return this.connection.pragma(text, options);
  }
  transaction<F extends (...args: never[]) => unknown>(fn: F): Database.Transaction<F> {
    return this.connection.transaction(fn);
  }
  close(): void {
    this.connection.close();
  }
}
