// A journal rule is written once, as a generator of the statements it needs, and each journal runs
// it on its own connection: SQLite at once (better-sqlite3 answers synchronously), PostgreSQL
// awaiting each statement. So the rule says what happens to batches, rows and files, and a
// journal only stores: it executes statements, keeps its transactions, and says how its SQL
// spells the few things the two dialects spell differently (Dialect).
//
// Statements use `?` for their parameters (PostgreSQL's runner numbers them), and only SQL that
// both journals read the same way; a parameter whose type PostgreSQL cannot infer is cast
// (CAST(? AS INTEGER) reads the same on both).
import type { Awaitable } from '../ports/awaitable.js';
import { SmsdropError } from '../errors.js';

/** A statement's parameter; a list only as Dialect.list encodes it. */
export type Param = string | number | null | Uint8Array | readonly string[] | readonly number[];

/** SQL with `?` for each of its parameters, then the parameters: ['next_attempt_at = ?', 0]. */
export type Fragment = readonly [sql: string, ...params: Param[]];

/** One thing a rule needs its journal to do. */
export type Step =
  | { readonly kind: 'run' | 'all' | 'get'; readonly text: string; readonly params: Param[] }
  /** What is written so far must be in the journal itself before any request names it. */
  | { readonly kind: 'durable' }
  /** A read of the journal's own, or the caller's (the repeat window's look-up). */
  | { readonly kind: 'call'; readonly call: () => Awaitable<unknown> };

/** A rule: run it with runNow (SQLite) or runAwaited (PostgreSQL). */
export type Rule<T> = Generator<Step, T, unknown>;

/** How a journal spells what the two dialects spell differently. */
export interface Dialect {
  /** The larger of two values (SQLite's two-argument max, PostgreSQL's greatest). */
  greatest(a: string, b: string): string;
  /** SQL true when `column` is one of the values of one parameter (encoded by `list`). */
  isIn(column: string): string;
  /** The same for a column of ids (integers), so that its index can be used. */
  isInIds(column: string): string;
  /** A list of values as the one parameter `isIn` and `pairs` read. */
  list(values: readonly string[] | readonly number[]): Param;
  /**
   * SQL true when (`ids`, `texts`) is a pair of two lists of one length, zipped (the ids, then the
   * texts, each encoded by `list`), or, where the journal's planner seeks an index on the two
   * columns for each id and each text of the lists (SQLite), an id and a text of the lists: an
   * index on the two is sought once a pair, or once an id and a text.
   */
  isInPairs(ids: string, texts: string): string;
  /** A table (text `a`, integer `b`) of two lists of one length, zipped, as two parameters. */
  pairs(a: string, b: string): string;
  /**
   * After a SELECT: locks the rows it reads against writers until the transaction ends ('' where
   * one writer at a time holds the whole journal).
   */
  forUpdate: string;
  /** After a SELECT: the rows it reads cannot change until the transaction ends. */
  forShare: string;
  /** After a SELECT: locks the rows it reads, leaving out those another transaction holds. */
  skipLocked: string;
  /** After a text in ORDER BY: sorts it by its bytes, as SQLite does, whatever the locale. */
  byBytes: string;
  /**
   * A time (ISO 8601 text, as nowIso writes it) as the journal stores it in attempts.started_at,
   * attempts.finished_at, batches.created_at and batches.updated_at (SQLite: milliseconds since
   * 1970, a third of the text's bytes in the table and in each index on it). Writes and
   * comparisons with those columns go through it.
   */
  storedTime(value: string): string;
  /** One of those columns (or an aggregate of it) read back as ISO 8601 text. */
  timeText(column: string): string;
  /**
   * The provider's smsMessageSid of an accepted batch as the journal keeps it in
   * batches.sms_message_sid (SQLite: 32 lowercase hex digits, as the provider gives them, as their
   * 16 bytes; anything else as it is). sidText reads the column back as the provider's text.
   */
  storedSid(sid: string | null): Param;
  sidText(column: string): string;
  /**
   * The provider's dateCreated (yyyyMMddHHmmss) as the journal keeps it in batches.date_created
   * (SQLite: 14 digits as 7 bytes, two a byte; anything else as it is). stampText reads it back.
   */
  storedStamp(stamp: string | null): Param;
  stampText(column: string): string;
  /**
   * The app id of a group, `group` being the groups table's name or alias in the statement
   * (SQLite: kept as a reference to apps, or as the text in groups written before).
   */
  appOf(group: string): string;
  /**
   * The numbers of a batch, `batch` being the batches table's name or alias in the statement, as
   * one comma-separated text; null for a batch without numbers kept (SQLite: a batch of one
   * number keeps it in its row only, not in batch_numbers too).
   */
  batchPhones(batch: string): string;
  /**
   * SQL: the process or node `node` (a parameter's SQL) as attempts.node keeps it (SQLite: a
   * reference to the processes table, which the journal's sender fills; PostgreSQL: the node's id).
   */
  storedNode(node: string): string;
  /**
   * After a table in FROM (with its alias): the index to read it by, where SQLite's planner would
   * pick a worse one (its INDEXED BY); '' where the planner needs no telling.
   */
  indexedBy(index: string): string;
  /**
   * A WITH may hold an UPDATE whose rows the statement after it reads (PostgreSQL's
   * data-modifying WITH; SQLite has none): a move and the write that goes with it are then one
   * statement (moves.ts, moveBatchThen).
   */
  writesInWith: boolean;
}

/** A statement that writes; the rows it changed. */
export function* run(text: string, ...params: Param[]): Rule<number> {
  return (yield { kind: 'run', text, params }) as number;
}

/** A statement's rows, as objects. */
export function* all<R>(text: string, ...params: Param[]): Rule<R[]> {
  return (yield { kind: 'all', text, params }) as R[];
}

/** A statement's first row, or undefined. */
export function* get<R>(text: string, ...params: Param[]): Rule<R | undefined> {
  return (yield { kind: 'get', text, params }) as R | undefined;
}

/** What is written so far is committed before a request can name it (see Step). */
export function* durable(): Rule<void> {
  yield { kind: 'durable' };
}

/** A read the rule does not spell in SQL itself: the journal's, or its caller's. */
export function* call<T>(read: () => Awaitable<T>): Rule<T> {
  return (yield { kind: 'call', call: read }) as T;
}

/** What runs a rule's statements on one journal connection. */
export interface Runner<A> {
  run(text: string, params: Param[]): A;
  all(text: string, params: Param[]): A;
  get(text: string, params: Param[]): A;
  durable(): A;
}

/** Runs a rule to its end on a journal that answers at once (SQLite). */
export function runNow<T>(rule: Rule<T>, runner: Runner<unknown>): T {
  let step = rule.next();
  while (!step.done) {
    const s = step.value;
    let answer: unknown;
    if (s.kind === 'durable') answer = runner.durable();
    else if (s.kind === 'call') answer = s.call();
    else answer = runner[s.kind](s.text, s.params);
    if (answer instanceof Promise)
      throw new SmsdropError('E_INTERNAL', 'a journal that answers at once was handed a promise');
    step = rule.next(answer);
  }
  return step.value;
}

/** Runs a rule to its end on a journal whose statements are awaited (PostgreSQL). */
export async function runAwaited<T>(rule: Rule<T>, runner: Runner<Promise<unknown>>): Promise<T> {
  let step = rule.next();
  while (!step.done) {
    const s = step.value;
    let answer: unknown;
    if (s.kind === 'durable') answer = await runner.durable();
    else if (s.kind === 'call') answer = await s.call();
    else answer = await runner[s.kind](s.text, s.params);
    step = rule.next(answer);
  }
  return step.value;
}
