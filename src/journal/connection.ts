// The journal of one data directory as one object: its connection, its prepared statements, and
// every piece of state that lives as long as the connection (the write queue, the bulk
// transaction, the intents, the batches to send first, the webhook receivers).
// Each module that works on a piece keeps its meaning (bulk.ts, intents.ts, writeQueue.ts, …); the
// piece itself lives here, so it ends with the connection and no module keeps a map keyed by it.
// The pieces' shapes are declared here too, so that this file imports nothing of the journal's.
import type { Worker } from 'node:worker_threads';
import type Database from 'better-sqlite3';

/** A journal's bulk transactions (bulk.ts). */
export interface BulkState {
  /** Rows written in the open bulk transaction, and when it began; undefined: none is open. */
  open: { rows: number; since: number } | undefined;
  /** Successful commits so far (see bulkCommits). */
  commits: number;
  /** Rows of the next commit (see startBulkRamp); undefined: ROWS_PER_COMMIT. */
  nextSize: number | undefined;
  /** Bulk transactions that SQLite rolled back (see bulkLosses). */
  losses: number;
}

/** A request started while a bulk transaction is open, made durable in a side file (intents.ts). */
export interface Intent {
  batchId: number;
  /** The batch's own req_id: a batch id reused after a rollback is not the batch that was sent. */
  batchReqId: string;
  /** The reqId the request carried (null with reqId off). */
  reqId: string | null;
  startedAt: string;
}

/** A journal's intents while enabled (intents.ts). */
export interface IntentLog {
  side: Database.Database;
  /** The side file's two statements of every turn, prepared once. */
  insert: Database.Statement;
  deleteCovered: Database.Statement;
  /** Noted during the current turn, written by commitIntents. */
  noted: Intent[];
  /**
   * Intents written to the side file, up to this seq, are in a committed journal transaction too.
   */
  coveredSeq: number;
  lastSeq: number;
  /** A write of this turn must be committed in the journal itself (rules.ts). */
  mustCommit: boolean;
  /** SQLite rolled back an open transaction that held attempts (see journalLost). */
  lost: boolean;
  onLost: (() => void) | undefined;
}

/** Journal writes of one turn of the event loop, in one transaction (writeQueue.ts). */
export interface WriteQueue {
  /** Runs `write` inside the next shared transaction; resolves with its result after the commit. */
  run<T>(write: () => T): Promise<T>;
  /** True while writes wait for their transaction (it runs at the next turn of the event loop). */
  waiting(): boolean;
}

/** How a statement returns rows: objects, arrays of columns, or the first column alone. */
export type StatementMode = 'object' | 'raw' | 'pluck';

/** A placed row matching a doubt (placedRows.ts): its id, group and number. */
export type PlacedRow = [rowId: number, groupId: number, phone: string];

/** The journal's thread (checkpoints.ts) and the look-up requests it has not answered yet. */
export interface JournalThread {
  readonly worker: Worker;
  readonly waiting: Map<
    number,
    { resolve: (rows: PlacedRow[]) => void; reject: (err: Error) => void }
  >;
  /** Requests asked of it so far. */
  asked: number;
}

/** What lives as long as the connection and only the journal's modules touch (insideOf). */
export interface JournalInside {
  /**
   * The SQLite connection: transactions, pragmas and statements run once (sql.ts prepares the
   * others once per text).
   */
  readonly connection: Database.Database;
  /** The open bulk transaction and its commits (bulk.ts). */
  readonly bulk: BulkState;
  /** Requests made durable in the side file while a bulk transaction is open (intents.ts). */
  intents: IntentLog | undefined;
  /** The one write queue (writeQueue.ts), made on first use. */
  writeQueue: WriteQueue | undefined;
  /** The thread that checkpoints the WAL while this process sends (checkpoints.ts). */
  checkpoints: JournalThread | undefined;
  /** Batches to send before the other due batches of their file (sendMoves.ts sendFirst). */
  readonly firstToSend: Set<number>;
  /**
   * BEGIN IMMEDIATE: the write lock is taken before the first read. Another connection (a command
   * such as `smsdrop pause` beside the daemon) writes too, and a transaction that read first could
   * otherwise no longer write once that connection committed (SQLITE_BUSY_SNAPSHOT).
   */
  transaction<F extends (...args: never[]) => unknown>(fn: F): Database.Transaction<F>;
  /**
   * Webhook receivers (ids of their URLs) while the daemon sends webhooks: the journal's writes
   * that webhook events report then add the event to the outbox in their own transaction
   * (outbox.ts). Empty: no events are written.
   */
  webhookTargets: readonly string[];
  /**
   * The statement for `text` in `mode`, prepared once. Its mode is set here and never again: a
   * statement is shared by every caller of the same text, and one caller switching it would
   * change what the others read.
   */
  statement(mode: StatementMode, text: string): Database.Statement;
  /** A name for a temporary table no other of this journal has. */
  temporaryTableName(prefix: string): string;
}

/**
 * What is inside a journal. Only src/journal/ can call it: index.ts does not export it, and
 * ESLint keeps the rest of src/ from importing this file (eslint.config.js).
 */
export let insideOf: (journal: Journal) => JournalInside;

/** The SQLite connection under `journal` (insideOf(journal).connection). */
export const connectionOf = (journal: Journal): Database.Database => insideOf(journal).connection;

function immediateTransaction<F extends (...args: never[]) => unknown>(
  connection: Database.Database,
  fn: F,
): Database.Transaction<F> {
  const transaction = connection.transaction(fn);
  type Args = Parameters<Database.Transaction<F>>;
  const immediate = (...args: Args) => transaction.immediate(...args);
  return Object.assign(immediate, {
    default: immediate,
    deferred: (...args: Args) => transaction.deferred(...args),
    immediate,
    exclusive: (...args: Args) => transaction.exclusive(...args),
  });
}

/** One open journal: its state is private, and only the journal's modules reach it (insideOf). */
export class Journal {
  readonly #inside: JournalInside;
  /** Prepared statements by mode and SQL text: preparing costs more than running. */
  readonly #statements = new Map<string, Database.Statement>();
  /** Temporary tables made so far (each gets a name of its own). */
  #temporaryTables = 0;

  static {
    insideOf = (journal) => journal.#inside;
  }

  constructor(connection: Database.Database) {
    this.#inside = {
      connection,
      bulk: { open: undefined, commits: 0, nextSize: undefined, losses: 0 },
      intents: undefined,
      writeQueue: undefined,
      checkpoints: undefined,
      firstToSend: new Set<number>(),
      transaction: (fn) => immediateTransaction(connection, fn),
      webhookTargets: [],
      statement: (mode, text) => this.#statement(mode, text),
      temporaryTableName: (prefix) => `${prefix}_${++this.#temporaryTables}`,
    };
  }

  #statement(mode: StatementMode, text: string): Database.Statement {
    const key = `${mode}\u0000${text}`;
    let statement = this.#statements.get(key);
    if (!statement) {
      statement = this.#inside.connection.prepare(text);
      if (mode === 'raw') statement.raw(true);
      else if (mode === 'pluck') statement.pluck(true);
      this.#statements.set(key, statement);
    }
    return statement;
  }

  /** The file it is. */
  get name(): string {
    return this.#inside.connection.name;
  }
  /** False once closed. */
  get open(): boolean {
    return this.#inside.connection.open;
  }
  close(): void {
    this.#inside.connection.close();
  }
}
