// The writes of the PostgreSQL plan store, gathered while a chunk is planned (synchronously) and
// sent after it, a few multi-row statements (unnest of one array per column) inside the intake's
// open transaction: one round trip per kind of write per chunk, never one per row.
import type pg from 'pg';
import type { GroupKey, IntakeCounts, PlannedRow } from '../ports/plan.js';
import { type FreshIdList, freshIds, type IdTable } from './ids.js';

/** A batch still taking numbers is never due: as SQLite's (journal/batchNumbers.ts). */
export const HELD = Number.MAX_SAFE_INTEGER;

/** SQL: the rows an update names, by their ids (byIndex): the primary key probed for each. */
const BY_ID = 'r.id = ANY($1::bigint[])';

/** A row's columns in PlannedRow's order, one array each (unnest takes arrays). */
interface RowColumns {
  id: number[];
  line: number[];
  phoneRaw: string[];
  phone: (string | null)[];
  groupId: (number | null)[];
  intake: string[];
  error: (string | null)[];
  extras: (string | null)[];
  batchId: (number | null)[];
  duplicateOf: (number | null)[];
}

function noRows(): RowColumns {
  return {
    id: [],
    line: [],
    phoneRaw: [],
    phone: [],
    groupId: [],
    intake: [],
    error: [],
    extras: [],
    batchId: [],
    duplicateOf: [],
  };
}

export class PlanWrites {
  header: string | undefined;
  groups: Array<{ id: number; key: GroupKey }> = [];
  /** Batches made since the last send, by id. */
  batches = new Map<number, { groupId: number; reqId: string; now: string }>();
  rows = noRows();
  /** Kept rows moved to a new id: [old, new]. */
  moves: Array<[number, number]> = [];
  /** Each batch's numbers as last saved. */
  numbers = new Map<number, string[]>();
  released = new Set<number>();
  releaseAllHeld = false;
  /** Batches to send first (PlanStore.sendFirst), made in this send or before it. */
  first: number[] = [];
  invalidCells: Array<[rowId: number, cells: string]> = [];
  duplicates: Array<[rowId: number, duplicateOf: number]> = [];
  rowBatches: Array<[rowId: number, batchId: number]> = [];
  counts: IntakeCounts | undefined;
  /** Ids to reserve with the send (IdReserve.topUp), by table. */
  topUp: Record<IdTable, number> = { rows: 0, groups: 0, batches: 0 };
  #sealed: unknown[] | undefined;

  addRow(id: number, row: PlannedRow): void {
    const r = this.rows;
    r.id.push(id);
    r.line.push(row[0]);
    r.phoneRaw.push(row[1]);
    r.phone.push(row[2]);
    r.groupId.push(row[3]);
    r.intake.push(row[4]);
    r.error.push(row[5]);
    r.extras.push(row[6]);
    r.batchId.push(row[7]);
    r.duplicateOf.push(row[8]);
  }

  /** Forgets the rows from `from` on (a chunk that failed before they were written). */
  dropRowsFrom(from: number): void {
    for (const column of Object.values(this.rows) as unknown[][]) column.length = from;
  }

  /**
   * Sends every write gathered and forgets them: the new records and their changes in one
   * statement (its foreign keys are checked at its end); moves and row changes, which only a
   * resumed intake and the settling of doubts make, in statements of their own after it.
   */
  async send(db: pg.ClientBase, fileId: number): Promise<FreshIds> {
    const parameters = this.#sealed ?? this.seal(fileId);
    const { rows } = await db.query<FreshIds>(ONE_STATEMENT, parameters);
    if (this.moves.length > 0) await moveRows(db, this.moves);
    if (this.first.length > 0)
      await db.query('UPDATE batches SET send_first = true WHERE id = ANY($1::bigint[])', [
        this.first,
      ]);
    if (this.releaseAllHeld)
      await db.query(
        `UPDATE batches SET next_attempt_at = 0 WHERE file_id = $1 AND next_attempt_at = ${HELD}`,
        [fileId],
      );
    if (this.duplicates.length > 0)
      await byIndex(
        db,
        `UPDATE rows r SET intake = 'duplicate', duplicate_of = u.of
         FROM unnest($1::bigint[], $2::bigint[]) AS u(id, of) WHERE r.id = u.id AND ${BY_ID}`,
        columns(this.duplicates),
      );
    if (this.rowBatches.length > 0)
      await byIndex(
        db,
        `UPDATE rows r SET batch_id = u.batch FROM unnest($1::bigint[], $2::bigint[]) AS u(id, batch)
         WHERE r.id = u.id AND ${BY_ID}`,
        columns(this.rowBatches),
      );
    this.#clear();
    return rows[0]!;
  }

  /**
   * Fixes the chunk statement's parameters now, each array already in PostgreSQL's text form: the
   * store seals a send while the one before it runs, so the server does not wait for the client
   * to write them out once that one answers.
   */
  seal(fileId: number): unknown[] {
    this.#sealed = this.#parameters(fileId).map((p) =>
      Array.isArray(p) ? arrayLiteral(p as ArrayElement[]) : p,
    );
    return this.#sealed;
  }

  /** ONE_STATEMENT's parameters, in its order. */
  #parameters(fileId: number): unknown[] {
    const counts = this.counts;
    const made = [...this.batches];
    const changed = [...new Set([...this.numbers.keys(), ...this.released])].filter(
      (id) => !this.batches.has(id),
    );
    const r = this.rows;
    return [
      fileId,
      this.header ?? null,
      ...(counts
        ? [counts.rows, counts.invalid, counts.duplicates, counts.repeats]
        : [null, null, null, null]),
      this.groups.map((g) => g.id),
      this.groups.map((g) => g.key.keyHash),
      this.groups.map((g) => g.key.appId),
      this.groups.map((g) => g.key.templateId),
      this.groups.map((g) => g.key.datasJson),
      made.map(([id]) => id),
      made.map(([, b]) => b.groupId),
      made.map(([, b]) => b.reqId),
      made.map(([id]) => this.numbers.get(id)?.length ?? 0),
      made.map(([id]) => this.released.has(id)),
      made.map(([, b]) => b.now),
      changed,
      changed.map((id) => this.numbers.get(id)?.length ?? null),
      changed.map((id) => this.released.has(id)),
      [...this.numbers.keys()],
      [...this.numbers.values()].map((phones) => phones.join(',')),
      ...[r.id, r.line, r.phoneRaw, r.phone, r.groupId, r.intake, r.error, r.extras, r.batchId],
      r.duplicateOf,
      ...columns(this.invalidCells),
      this.topUp.rows,
      this.topUp.groups,
      this.topUp.batches,
    ];
  }

  #clear(): void {
    this.header = undefined;
    this.groups = [];
    this.batches = new Map();
    this.rows = noRows();
    this.moves = [];
    this.numbers = new Map();
    this.released = new Set();
    this.releaseAllHeld = false;
    this.first = [];
    this.invalidCells = [];
    this.duplicates = [];
    this.rowBatches = [];
    this.counts = undefined;
    this.topUp = { rows: 0, groups: 0, batches: 0 };
    this.#sealed = undefined;
  }
}

/**
 * A chunk's writes in one round trip. A part given empty arrays does nothing. Each part touches
 * rows no other part does (new batches, batches made earlier, ...).
 */
const ONE_STATEMENT = `
  WITH file AS (
    UPDATE files SET header = coalesce($2::text, header), rows = coalesce($3::int, rows),
      invalid = coalesce($4::int, invalid), duplicates = coalesce($5::int, duplicates),
      repeats = coalesce($6::int, repeats)
    WHERE id = $1 AND ($2::text IS NOT NULL OR $3::int IS NOT NULL)
  ), new_groups AS (
    INSERT INTO groups (id, file_id, key_hash, app_id, template_id, datas)
    SELECT u.id, $1, u.key_hash, u.app_id, u.template_id, u.datas
    FROM unnest($7::bigint[], $8::bigint[], $9::text[], $10::text[], $11::text[])
      AS u(id, key_hash, app_id, template_id, datas)
  ), new_batches AS (
    INSERT INTO batches (id, file_id, group_id, req_id, numbers, state, next_attempt_at, created_at, updated_at)
    SELECT u.id, $1, u.group_id, u.req_id, u.numbers, 'planned', CASE WHEN u.due THEN 0 ELSE ${HELD} END, u.now, u.now
    FROM unnest($12::bigint[], $13::bigint[], $14::text[], $15::int[], $16::bool[], $17::text[])
      AS u(id, group_id, req_id, numbers, due, now)
  ), old_batches AS (
    UPDATE batches b SET numbers = coalesce(u.numbers, b.numbers),
      next_attempt_at = CASE WHEN u.due THEN 0 ELSE b.next_attempt_at END
    FROM unnest($18::bigint[], $19::int[], $20::bool[]) AS u(id, numbers, due) WHERE b.id = u.id
  ), numbers AS (
    INSERT INTO batch_numbers (batch_id, phones) SELECT * FROM unnest($21::bigint[], $22::text[])
    ON CONFLICT (batch_id) DO UPDATE SET phones = excluded.phones
  ), new_rows AS (
    INSERT INTO rows (id, file_id, line, phone_raw, phone, group_id, intake, error, extras, batch_id, duplicate_of)
    SELECT u.id, $1, u.line, u.phone_raw, u.phone, u.group_id, u.intake, u.error, u.extras, u.batch_id, u.duplicate_of
    FROM unnest($23::bigint[], $24::int[], $25::text[], $26::text[], $27::bigint[], $28::text[], $29::text[],
                $30::text[], $31::bigint[], $32::bigint[])
      AS u(id, line, phone_raw, phone, group_id, intake, error, extras, batch_id, duplicate_of)
  ), cells AS (
    INSERT INTO invalid_cells (row_id, file_id, cells)
    SELECT u.row_id, $1, u.cells FROM unnest($33::bigint[], $34::text[]) AS u(row_id, cells)
  )
  SELECT ${freshIds('rows', '$35')} AS rows, ${freshIds('groups', '$36')} AS groups,
    ${freshIds('batches', '$37')} AS batches`;

/** Ids the chunk statement reserved (null: none asked), as freshIds selects them. */
export type FreshIds = Record<IdTable, FreshIdList>;

type ArrayElement = string | number | boolean | null | undefined;

/** What an array's quoted element escapes with a backslash. */
const TO_ESCAPE = /[\\"]/g;

/**
 * An array parameter in PostgreSQL's text form, as node-postgres would write it (strings quoted
 * and escaped, null as NULL), but at a time the store chooses.
 */
export function arrayLiteral(values: readonly ArrayElement[]): string {
  let text = '{';
  for (let i = 0; i < values.length; i++) {
    if (i > 0) text += ',';
    const v = values[i];
    if (v === null || v === undefined) text += 'NULL';
    else if (typeof v === 'number') text += v;
    else if (typeof v === 'boolean') text += v ? 't' : 'f';
    // most texts (numbers, states, ids) hold neither: two scans cost less than the regex
    else if (v.indexOf('"') === -1 && v.indexOf('\\') === -1) text += '"' + v + '"';
    else text += '"' + v.replace(TO_ESCAPE, '\\$&') + '"';
  }
  return text + '}';
}

/**
 * Runs an update of rows named by id through the primary key: the rows were just written and not
 * yet analysed, so the planner would expect a small table and scan it whole.
 */
async function byIndex(db: pg.ClientBase, sql: string, values: unknown[]): Promise<void> {
  await db.query('SET LOCAL enable_seqscan = off');
  await db.query(sql, values);
  // (a failure rolls the transaction back, and the setting with it)
  await db.query('SET LOCAL enable_seqscan = on');
}

/** Pairs as two arrays, for unnest. */
function columns<A, B>(pairs: ReadonlyArray<readonly [A, B]>): [A[], B[]] {
  return [pairs.map((p) => p[0]), pairs.map((p) => p[1])];
}

/** An interrupted intake's kept rows take new ids, between the rows read before and after. */
async function moveRows(db: pg.ClientBase, moves: Array<[number, number]>): Promise<void> {
  const cols =
    'file_id, line, phone_raw, phone, group_id, intake, error, duplicate_of, extras, batch_id';
  await db.query(
    `WITH m AS (SELECT * FROM unnest($1::bigint[], $2::bigint[]) AS m(old, new)),
     moved AS (INSERT INTO rows (id, ${cols}) SELECT m.new, ${cols} FROM rows r JOIN m ON r.id = m.old)
     DELETE FROM rows r USING m WHERE r.id = m.old`,
    columns(moves),
  );
}
