// The writes of the PostgreSQL plan store, gathered while a chunk is planned (synchronously) and
// sent after it, a few multi-row statements (unnest of one array per column) inside the intake's
// open transaction: one round trip per kind of write per chunk, never one per row.
import type pg from 'pg';
import type { GroupKey, IntakeCounts, PlannedRow } from '../plan/store.js';

/** A batch still taking numbers is never due: as SQLite's (journal/batchNumbers.ts). */
export const HELD = Number.MAX_SAFE_INTEGER;

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
  batches: Array<{ id: number; groupId: number; reqId: string; now: string }> = [];
  rows = noRows();
  /** Kept rows moved to a new id: [old, new]. */
  moves: Array<[number, number]> = [];
  /** Each batch's numbers as last saved. */
  numbers = new Map<number, string[]>();
  released = new Set<number>();
  releaseAllHeld = false;
  invalidCells: Array<[rowId: number, cells: string]> = [];
  duplicates: Array<[rowId: number, duplicateOf: number]> = [];
  rowBatches: Array<[rowId: number, batchId: number]> = [];
  counts: IntakeCounts | undefined;

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

  /** Sends every write gathered, in an order the foreign keys accept, and forgets them. */
  async send(db: pg.ClientBase, fileId: number): Promise<void> {
    if (this.header !== undefined)
      await db.query('UPDATE files SET header = $2 WHERE id = $1', [fileId, this.header]);
    if (this.groups.length > 0) await insertGroups(db, fileId, this.groups);
    if (this.batches.length > 0) await insertBatches(db, fileId, this.batches);
    if (this.rows.id.length > 0) await insertRows(db, fileId, this.rows);
    if (this.moves.length > 0) await moveRows(db, this.moves);
    if (this.numbers.size > 0) await saveNumbers(db, this.numbers);
    if (this.released.size > 0)
      await db.query('UPDATE batches SET next_attempt_at = 0 WHERE id = ANY($1::bigint[])', [
        [...this.released],
      ]);
    if (this.releaseAllHeld)
      await db.query(
        `UPDATE batches SET next_attempt_at = 0 WHERE file_id = $1 AND next_attempt_at = ${HELD}`,
        [fileId],
      );
    await this.#sendRowChanges(db, fileId);
    this.#clear();
  }

  async #sendRowChanges(db: pg.ClientBase, fileId: number): Promise<void> {
    if (this.invalidCells.length > 0)
      await db.query(
        `INSERT INTO invalid_cells (row_id, file_id, cells)
         SELECT u.row_id, $1, u.cells FROM unnest($2::bigint[], $3::text[]) AS u(row_id, cells)`,
        [fileId, ...columns(this.invalidCells)],
      );
    if (this.duplicates.length > 0)
      await db.query(
        `UPDATE rows r SET intake = 'duplicate', duplicate_of = u.of
         FROM unnest($1::bigint[], $2::bigint[]) AS u(id, of) WHERE r.id = u.id`,
        columns(this.duplicates),
      );
    if (this.rowBatches.length > 0)
      await db.query(
        `UPDATE rows r SET batch_id = u.batch FROM unnest($1::bigint[], $2::bigint[]) AS u(id, batch)
         WHERE r.id = u.id`,
        columns(this.rowBatches),
      );
    if (this.counts)
      await db.query(
        'UPDATE files SET rows = $2, invalid = $3, duplicates = $4, repeats = $5 WHERE id = $1',
        [
          fileId,
          this.counts.rows,
          this.counts.invalid,
          this.counts.duplicates,
          this.counts.repeats,
        ],
      );
  }

  #clear(): void {
    this.header = undefined;
    this.groups = [];
    this.batches = [];
    this.rows = noRows();
    this.moves = [];
    this.numbers = new Map();
    this.released = new Set();
    this.releaseAllHeld = false;
    this.invalidCells = [];
    this.duplicates = [];
    this.rowBatches = [];
    this.counts = undefined;
  }
}

/** Pairs as two arrays, for unnest. */
function columns<A, B>(pairs: ReadonlyArray<readonly [A, B]>): [A[], B[]] {
  return [pairs.map((p) => p[0]), pairs.map((p) => p[1])];
}

async function insertGroups(
  db: pg.ClientBase,
  fileId: number,
  groups: PlanWrites['groups'],
): Promise<void> {
  await db.query(
    `INSERT INTO groups (id, file_id, key_hash, app_id, template_id, datas)
     SELECT u.id, $1, u.key_hash, u.app_id, u.template_id, u.datas
     FROM unnest($2::bigint[], $3::bigint[], $4::text[], $5::text[], $6::text[])
       AS u(id, key_hash, app_id, template_id, datas)`,
    [
      fileId,
      groups.map((g) => g.id),
      groups.map((g) => g.key.keyHash),
      groups.map((g) => g.key.appId),
      groups.map((g) => g.key.templateId),
      groups.map((g) => g.key.datasJson),
    ],
  );
}

async function insertBatches(
  db: pg.ClientBase,
  fileId: number,
  batches: PlanWrites['batches'],
): Promise<void> {
  await db.query(
    `INSERT INTO batches (id, file_id, group_id, req_id, numbers, state, next_attempt_at, created_at, updated_at)
     SELECT u.id, $1, u.group_id, u.req_id, 0, 'planned', ${HELD}, u.now, u.now
     FROM unnest($2::bigint[], $3::bigint[], $4::text[], $5::text[]) AS u(id, group_id, req_id, now)`,
    [
      fileId,
      batches.map((b) => b.id),
      batches.map((b) => b.groupId),
      batches.map((b) => b.reqId),
      batches.map((b) => b.now),
    ],
  );
}

async function insertRows(db: pg.ClientBase, fileId: number, r: RowColumns): Promise<void> {
  await db.query(
    `INSERT INTO rows (id, file_id, line, phone_raw, phone, group_id, intake, error, extras, batch_id, duplicate_of)
     SELECT u.id, $1, u.line, u.phone_raw, u.phone, u.group_id, u.intake, u.error, u.extras, u.batch_id, u.duplicate_of
     FROM unnest($2::bigint[], $3::int[], $4::text[], $5::text[], $6::bigint[], $7::text[], $8::text[],
                 $9::text[], $10::bigint[], $11::bigint[])
       AS u(id, line, phone_raw, phone, group_id, intake, error, extras, batch_id, duplicate_of)`,
    [
      fileId,
      r.id,
      r.line,
      r.phoneRaw,
      r.phone,
      r.groupId,
      r.intake,
      r.error,
      r.extras,
      r.batchId,
      r.duplicateOf,
    ],
  );
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

async function saveNumbers(db: pg.ClientBase, numbers: Map<number, string[]>): Promise<void> {
  const ids = [...numbers.keys()];
  const phones = [...numbers.values()];
  await db.query(
    `INSERT INTO batch_numbers (batch_id, phones) SELECT * FROM unnest($1::bigint[], $2::text[])
     ON CONFLICT (batch_id) DO UPDATE SET phones = excluded.phones`,
    [ids, phones.map((p) => p.join(','))],
  );
  await db.query(
    `UPDATE batches b SET numbers = u.n FROM unnest($1::bigint[], $2::int[]) AS u(id, n)
     WHERE b.id = u.id`,
    [ids, phones.map((p) => p.length)],
  );
}
