// The journal's side of planning (PlanStore, src/plan/store.ts): the reads and writes the planner
// asks for while a file's rows are read, for that file, each one statement or a few. Deciding
// which batch a row joins, and when a batch is released, is the planner's; this only stores it.
// Statements are prepared when the store is made: these verbs run for every row or batch.
import type {
  FileHeader,
  GroupKey,
  HeldBatch,
  IntakeCounts,
  PlacedKey,
  PlannedRow,
  PlanStore,
} from '../ports/plan.js';
import type { Awaitable } from '../ports/awaitable.js';
import { SmsdropError } from '../errors.js';
import { setFileHeader } from './files.js';
import { sendFirst } from './sendMoves.js';
import { HELD } from './batchNumbers.js';
import { newReqId } from '../journalRules/outcomes.js';
import {
  bulkCommits,
  bulkLosses,
  bulkWrite,
  commitBulk,
  RowsLostError,
  startBulkRamp,
} from './bulk.js';
import { intentsEnabled } from './intents.js';
import type { Journal } from './connection.js';
import { type Query, sql, sqlPluck, sqlRaw } from './sql.js';
import { SQLITE_DIALECT } from './rules.js';
import { type PlacedRow, placedRows } from './placedRows.js';
import { createRowInserter, type RowInserter } from './rowInserter.js';
import { suppressionCheck } from './suppression.js';

const APP_ID = SQLITE_DIALECT.appOf('groups');

const KEPT_COLUMNS =
  'file_id, line, phone_raw, phone, group_id, intake, error, duplicate_of, extras, batch_id';

/** The statements of a store, prepared once. */
function statementsOf(db: Journal) {
  return {
    keptNumbers: sqlRaw(
      db,
      "SELECT group_id, phone FROM rows WHERE file_id = ? AND intake = 'valid'",
    ),
    findGroups: sql(
      db,
      `SELECT id, ${APP_ID} AS app_id, template_id, datas FROM groups WHERE file_id = ? AND key_hash = ?`,
    ),
    appRef: sqlPluck(db, 'SELECT id FROM apps WHERE app_id = ?'),
    insertApp: sql(db, 'INSERT INTO apps (app_id) VALUES (?)'),
    insertGroup: sql(
      db,
      "INSERT INTO groups (file_id, key_hash, app_id, app, template_id, datas) VALUES (?, ?, '', ?, ?, ?)",
    ),
    groupById: sql(db, `SELECT ${APP_ID} AS app_id, template_id, datas FROM groups WHERE id = ?`),
    // Only a held batch can take more numbers: a released one may be on its way already.
    heldBatchOf: sql(
      db,
      `SELECT b.id, b.numbers, ${SQLITE_DIALECT.batchPhones('b')} AS phones FROM batches b
       WHERE b.group_id = ? AND b.state = 'planned' AND b.next_attempt_at = ${HELD} ORDER BY b.id DESC LIMIT 1`,
    ),
    insertBatch: sql(
      db,
      `INSERT INTO batches (file_id, group_id, req_id, numbers, state, next_attempt_at, created_at, updated_at)
       VALUES (?, ?, ?, 0, 'planned', ${HELD}, ${SQLITE_DIALECT.storedTime('?')}, ${SQLITE_DIALECT.storedTime('?')})`,
    ),
    writePhones: sql(
      db,
      'INSERT INTO batch_numbers (batch_id, phones) VALUES (?, ?) ON CONFLICT (batch_id) DO UPDATE SET phones = excluded.phones',
    ),
    forgetPhones: sql(db, 'DELETE FROM batch_numbers WHERE batch_id = ?'),
    writeCount: sql(db, 'UPDATE batches SET numbers = ? WHERE id = ?'),
    release: sql(db, 'UPDATE batches SET next_attempt_at = 0 WHERE id = ?'),
    releaseHeld: sql(
      db,
      `UPDATE batches SET next_attempt_at = 0 WHERE file_id = ? AND next_attempt_at = ${HELD}`,
    ),
    readKept: sqlRaw(db, `SELECT ${KEPT_COLUMNS} FROM rows WHERE id = ?`),
    deleteKept: sql(db, 'DELETE FROM rows WHERE id = ?'),
    insertKept: sql(db, `INSERT INTO rows (${KEPT_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`),
    insertCells: sql(db, 'INSERT INTO invalid_cells (row_id, file_id, cells) VALUES (?, ?, ?)'),
    markDuplicate: sql(db, "UPDATE rows SET intake = 'duplicate', duplicate_of = ? WHERE id = ?"),
    setRowBatch: sql(db, 'UPDATE rows SET batch_id = ? WHERE id = ?'),
    fileCounts: sql(
      db,
      'UPDATE files SET rows = ?, invalid = ?, duplicates = ?, repeats = ? WHERE id = ?',
    ),
  } satisfies Record<string, Query>;
}

export class JournalPlanStore implements PlanStore {
  readonly #db: Journal;
  readonly #fileId: number;
  readonly #rows: RowInserter;
  readonly #sql: ReturnType<typeof statementsOf>;
  /** Rows of suppressed numbers are rejected with the reason (none to look up: no cost). */
  readonly #suppressed: ((phone: string) => string | undefined) | undefined;
  /** Bulk transactions rolled back before this store began: one more means its rows are gone. */
  readonly #lossesAtStart: number;
  readonly releaseOnlyCommitted: boolean;
  /** The doubts' placed rows, once prepareSettle has looked them up. */
  #placed: PlacedRow[] | undefined;

  constructor(db: Journal, fileId: number) {
    this.#db = db;
    this.#fileId = fileId;
    this.#rows = createRowInserter(db, fileId);
    this.#sql = statementsOf(db);
    this.#suppressed = suppressionCheck(db);
    this.releaseOnlyCommitted = intentsEnabled(db);
    if (this.releaseOnlyCommitted) startBulkRamp(db);
    this.#lossesAtStart = bulkLosses(db);
  }

  saveHeader(header: FileHeader): void {
    setFileHeader(this.#db, this.#fileId, header);
  }
  addRow(row: PlannedRow, onId?: (rowId: number) => void): void {
    this.#rows.add(row, onId);
  }
  flushRows(): void {
    this.#rows.flush();
  }
  dropRows(): void {
    this.#rows.drop();
  }

  /** A kept row gets a new id here, between the rows read before and after its line. */
  moveKeptRow(rowId: number): void {
    this.#rows.flush(); // the rows read before it keep lower ids
    const values = this.#sql.readKept.get(rowId) as unknown[];
    // (first: a unique index of rows by number, dropped by migration 4, once required it)
    this.#sql.deleteKept.run(rowId);
    this.#sql.insertKept.run(...values);
  }

  keptNumbers(): Iterable<[groupId: number, phone: string]> {
    return this.#sql.keptNumbers.iterate(this.#fileId) as Iterable<[number, string]>;
  }
  keepInvalidCells(rowId: number, cells: readonly string[]): void {
    this.#sql.insertCells.run(rowId, this.#fileId, JSON.stringify(cells));
  }
  whySuppressed(phone: string): string | undefined {
    return this.#suppressed?.(phone);
  }
  markDuplicate(rowId: number, duplicateOf: number): void {
    this.#sql.markDuplicate.run(duplicateOf, rowId);
  }
  setRowBatch(rowId: number, batchId: number): void {
    this.#sql.setRowBatch.run(batchId, rowId);
  }

  /**
   * A large file's doubts are looked up a page of rows at a time, giving the requests in flight
   * their turns; a file of a page or less at once, with nothing to await.
   */
  prepareSettle(doubts: readonly PlacedKey[]): Awaitable<void> {
    const found = placedRows(this.#db, this.#fileId, doubts);
    if (found instanceof Promise)
      return found.then((placed) => {
        this.#placed = placed;
      });
    this.#placed = found;
  }
  /** Looked up by prepareSettle, for the doubts it was given (the planner asks for those). */
  placedRowsMatching(_keys: Iterable<PlacedKey>): PlacedRow[] {
    const placed = this.#placed;
    if (!placed)
      throw new SmsdropError(
        'E_INTERNAL',
        "the doubts' placed rows were asked before prepareSettle",
      );
    this.#placed = undefined;
    return placed;
  }

  findGroup(key: GroupKey): number | undefined {
    const candidates = this.#sql.findGroups.all(this.#fileId, key.keyHash) as {
      id: number;
      app_id: string;
      template_id: string;
      datas: string;
    }[];
    return candidates.find(
      (g) =>
        g.app_id === key.appId && g.template_id === key.templateId && g.datas === key.datasJson,
    )?.id;
  }
  insertGroup(key: GroupKey): number {
    // Looked up each time, not remembered: an app written in a transaction rolled back is gone.
    const app =
      (this.#sql.appRef.get(key.appId) as number | undefined) ??
      Number(this.#sql.insertApp.run(key.appId).lastInsertRowid);
    return Number(
      this.#sql.insertGroup.run(this.#fileId, key.keyHash, app, key.templateId, key.datasJson)
        .lastInsertRowid,
    );
  }
  groupValues(groupId: number): { appId: string; templateId: string; datas: string[] } {
    const g = this.#sql.groupById.get(groupId) as {
      app_id: string;
      template_id: string;
      datas: string;
    };
    return { appId: g.app_id, templateId: g.template_id, datas: JSON.parse(g.datas) as string[] };
  }

  heldBatchOf(groupId: number): HeldBatch | undefined {
    type Held = { id: number; numbers: number; phones: string | null } | undefined;
    let latest = this.#sql.heldBatchOf.get(groupId) as Held;
    if (latest?.numbers === 1 && latest.phones === null) {
      // Its one number is its row's, which may still wait in the queue of rows to write.
      this.#rows.flush();
      latest = this.#sql.heldBatchOf.get(groupId) as Held;
    }
    return latest && { id: latest.id, phones: latest.phones ? latest.phones.split(',') : [] };
  }
  insertBatch(groupId: number, now: string): number {
    return Number(
      this.#sql.insertBatch.run(this.#fileId, groupId, newReqId(), now, now).lastInsertRowid,
    );
  }
  saveBatchNumbers(batchId: number, phones: readonly string[]): void {
    // One number is its row's (SQLITE_DIALECT.batchPhones): a batch_numbers row would repeat it.
    if (phones.length === 1) this.#sql.forgetPhones.run(batchId);
    else this.#sql.writePhones.run(batchId, phones.join(','));
    this.#sql.writeCount.run(phones.length, batchId);
  }
  releaseBatch(batchId: number): void {
    this.#sql.release.run(batchId);
  }
  releaseHeldBatches(): void {
    this.#sql.releaseHeld.run(this.#fileId);
  }
  sendFirst(batchIds: Iterable<number>): void {
    sendFirst(this.#db, batchIds);
  }
  finishIntakeCounts(counts: IntakeCounts): void {
    this.#sql.fileCounts.run(
      counts.rows,
      counts.invalid,
      counts.duplicates,
      counts.repeats,
      this.#fileId,
    );
  }

  commits(): number {
    return bulkCommits(this.#db);
  }
  writeInBulk(rows: number, write: () => void): void {
    bulkWrite(this.#db, rows, write);
  }
  commit(): void {
    commitBulk(this.#db);
  }
  rowsLost(): boolean {
    return bulkLosses(this.#db) !== this.#lossesAtStart;
  }
  assertNothingLost(): void {
    if (this.rowsLost()) throw new RowsLostError();
  }
}
