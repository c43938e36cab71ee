// Ids the PostgreSQL plan store hands out at once (PlanStore's addRow, insertGroup, insertBatch
// answer synchronously), reserved from the tables' identity sequences a chunk ahead. One statement
// takes as many values as asked: nextval is atomic, so several nodes reserving at the same time
// never get the same id, and the values one call takes increase, as do those of later calls. They
// need not be contiguous (another node's values may fall between): ids only have to be unique and
// follow the order the store hands them out in (a file's rows in line order).
import type pg from 'pg';
import { SmsdropError } from '../errors.js';

/** The tables whose ids the store makes itself; their identity sequences (table_id_seq). */
export type IdTable = 'rows' | 'groups' | 'batches';

/**
 * Taken at least this many at a time, so that most chunks reserve nothing: a chunk of ~100 rows
 * takes ~100 row ids, a batch id per ~200 rows, a group id per new message.
 */
const LEAST_RESERVED: Record<IdTable, number> = { rows: 4096, groups: 256, batches: 1024 };

/**
 * SQL, a value: as many fresh ids of the table's identity sequence as the parameter `count`
 * says, ascending, as one text of decimal ids separated by commas (split here, a few times faster
 * than node-postgres parses a `bigint[]`: an intake reserves an id for each row and batch); null
 * for none. A reservation of its own selects it; a send's statement (planWrites.ts) ends with one
 * for each table.
 */
export function freshIds(table: IdTable, count: string): string {
  return `(SELECT string_agg(v::text, ',' ORDER BY v)
    FROM (SELECT nextval('${table}_id_seq') AS v FROM generate_series(1, ${count}::int)) s)`;
}

/** Ids as freshIds selects them. */
export type FreshIdList = string | null;

export class IdReserve {
  readonly #table: IdTable;
  /** Reserved, not handed out yet, ascending; handed out from `#next`. */
  #ids: number[] = [];
  #next = 0;
  /** A send is reserving more (topUp). */
  #toppingUp = false;

  constructor(table: IdTable) {
    this.#table = table;
  }

  /** How many are reserved and not handed out. */
  get available(): number {
    return this.#ids.length - this.#next;
  }

  /** Makes sure `count` ids can be taken without asking the database. */
  async reserve(db: pg.ClientBase, count: number): Promise<void> {
    const missing = count - this.available;
    if (missing <= 0) return;
    const { rows } = await db.query<{ ids: FreshIdList }>(
      `SELECT ${freshIds(this.#table, '$1')} AS ids`,
      [Math.max(missing, LEAST_RESERVED[this.#table])],
    );
    this.add(rows[0]!.ids);
  }

  /**
   * How many ids a send should reserve on its way (its statement takes them: ONE_STATEMENT's
   * last part), so that the chunks planned meanwhile find them in hand: `amount` once fewer than
   * `low` remain, none while such a reservation is on its way.
   */
  topUp(low: number, amount: number): number {
    if (this.#toppingUp || this.available >= low) return 0;
    this.#toppingUp = true;
    return amount;
  }

  /** Ids reserved by a statement, ascending, after those in hand (null: none were asked). */
  add(fresh: FreshIdList): void {
    if (fresh === null) return;
    this.#ids = [...this.#ids.slice(this.#next), ...fresh.split(',').map(Number)];
    this.#next = 0;
    this.#toppingUp = false;
  }

  /** The next reserved id; reserving too few is a bug of the store (prepare before planning). */
  take(): number {
    if (this.#next >= this.#ids.length)
      throw new SmsdropError(
        'E_INTERNAL',
        `no ${this.#table} id reserved: the plan store was asked more than it was prepared for`,
      );
    return this.#ids[this.#next++]!;
  }
}

const TABLES = ['rows', 'groups', 'batches'] as const satisfies readonly IdTable[];

/** One plan store's reserves, a table each. */
export class IdReserves {
  readonly rows = new IdReserve('rows');
  readonly groups = new IdReserve('groups');
  readonly batches = new IdReserve('batches');

  /** What a send should reserve of each table (IdReserve.topUp). */
  topUps(low: number, amount: number): Record<IdTable, number> {
    return Object.fromEntries(TABLES.map((t) => [t, this[t].topUp(low, amount)])) as Record<
      IdTable,
      number
    >;
  }

  /** The ids a send reserved, by table. */
  add(fresh: Record<IdTable, FreshIdList>): void {
    for (const table of TABLES) this[table].add(fresh[table]);
  }
}
