// PlanStore on the PostgreSQL journal: the planner's verbs answer at once, from what the store
// loaded before the chunk (prepareChunk, prepareSettle: the file's groups the chunk names and their
// held batches, the suppressed numbers among its rows, the placed rows the doubts ask about) and
// from ids reserved ahead (ids.ts). Writes are gathered while the chunk is planned and sent after
// it in a few multi-row statements (planWrites.ts), into a transaction held open across chunks
// and committed every ROWS_PER_COMMIT rows, as SQLite's bulk transaction is. Everything this store
// reads goes through that transaction, so it sees what it wrote before.
//
// Senders read through other connections: a released batch is theirs once its transaction commits
// (releasesSeenAtCommit). Its rows and numbers commit with it or before, so a batch may be released
// in the transaction that made it (releaseOnlyCommitted false): a sender never sees it half made.
//
// A leader of the intake turn (intakeTurn.ts) asks with each send whether a follower waits for the
// check turn; one waiting, the next step commits and hands the turn over, then goes on once it is
// back: between the two, nothing of this file is checked and not yet committed.
import { setImmediate as nextTurn } from 'node:timers/promises';
import type pg from 'pg';
import { newReqId } from '../journalRules/outcomes.js';
import { SmsdropError } from '../errors.js';
import type {
  ChunkNeeds,
  FileHeader,
  GroupKey,
  HeldBatch,
  IntakeCounts,
  PlacedKey,
  PlannedRow,
  PlanStore,
} from '../ports/plan.js';
import { IdReserves } from './ids.js';
import type { Awaitable } from '../ports/awaitable.js';
import {
  anySuppressed,
  type GroupRecord,
  hasGroups,
  loadGroups,
  placedRowsMatching,
  suppressedAmong,
} from './planReads.js';
import { PlanWrites } from './planWrites.js';
import { type BeforeCommit, IntakeTransaction } from './bulk.js';
import {
  type CheckTurnPasses,
  checkTurnWanted,
  passCheckTurn,
  type TurnRole,
} from './intakeTurn.js';

/** Rows per commit once under way; the first commits come sooner (sending starts early). */
export const ROWS_PER_COMMIT = 50_000;
const FIRST_ROWS_PER_COMMIT = 5_000;
/**
 * Groups kept in memory: more than the planner holds (GROUP_CACHE_SIZE, 20,000) plus what a chunk
 * adds, so a group the planner drops and takes up again within a chunk is still known here.
 */
const GROUPS_KEPT = 50_000;
/** Rows gathered before they are sent (a round trip per few chunks, not per chunk). */
const SEND_ROWS = 2_000;

export interface PgPlanOptions {
  /** Batches intake asks to go first, handed over once committed (the SendStore's list). */
  sendFirst?: (batchIds: number[]) => void;
  /** Numbers an interrupted intake left in batches, by group (FileStore.beginIntake read them). */
  kept?: Array<[groupId: number, phone: string]>;
  /** The intake turn's connection (intakeTurn.ts): the transactions run on it. */
  turn?: pg.PoolClient;
  /** The turn's role: a leader hands the check turn over between commits to a follower waiting. */
  role?: TurnRole;
  /** Where a leader counts its hand-overs (the handle's own; the window's look-ups read it). */
  passes?: CheckTurnPasses;
  /** Checked in each commit's transaction before it commits (the file still this node's). */
  beforeCommit?: BeforeCommit;
}

export class PgPlanStore implements PlanStore {
  readonly releaseOnlyCommitted = false;
  readonly releasesSeenAtCommit = true;
  readonly #fileId: number;
  readonly #options: PgPlanOptions;
  #writes = new PlanWrites();
  readonly #tx: IntakeTransaction;
  /** The send under way while the next chunks are planned. */
  #inFlight: Promise<void> | undefined;
  /** Sends and commits made by writeInBulk not answered yet. */
  #unanswered = 0;
  readonly #ids = new IdReserves();
  /** Known groups by id, least recently found first; and by key hash, for the hashes loaded. */
  #groups = new Map<number, GroupRecord>();
  #byHash = new Map<number, GroupRecord[]>();
  /** Held batches' numbers as last saved, and their group. */
  #held = new Map<number, { group: GroupRecord; phones: string[] }>();
  #suppressed: Map<string, string> | undefined;
  #anySuppressed: boolean | undefined;
  /** Whether the file had groups before this intake (an intake read again), and any forgotten. */
  #fileHadGroups: boolean | undefined;
  #trimmed = false;
  #rowsUnsent = 0;
  #placed: Array<[number, number, string]> = [];
  /** Rows added whose ids were asked for (onId), told at flushRows as SQLite's are. */
  #waiting: Array<[onId: (rowId: number) => void, rowId: number]> = [];
  #rowsFlushed = 0;
  #firstPending: number[] = [];
  #rowsInTransaction = 0;
  #commitSize = FIRST_ROWS_PER_COMMIT;
  #commits = 0;
  /** A follower waits for the check turn (seen by a send): the next step commits and hands over. */
  #passWanted = false;

  constructor(pool: pg.Pool, fileId: number, options: PgPlanOptions = {}) {
    this.#tx = new IntakeTransaction(pool, fileId, {
      turn: options.turn,
      beforeCommit: options.beforeCommit,
    });
    this.#fileId = fileId;
    this.#options = options;
  }

  /** Asks the journal only for what memory and the ids in hand do not answer. */
  prepareChunk(needs: ChunkNeeds): Awaitable<void> {
    const hashes = [...new Set(needs.groups.map((g) => g.keyHash))];
    const unknown = hashes.filter((h) => !this.#byHash.has(h));
    // Groups this intake made are all known here until sent (forgotten only then): with none in
    // the journal before it and none forgotten, an unknown key is a new group.
    const readGroups = unknown.length > 0 && (this.#fileHadGroups !== false || this.#trimmed);
    const enoughIds =
      this.#ids.rows.available >= needs.rows &&
      this.#ids.groups.available >= needs.groups.length &&
      this.#ids.batches.available >= needs.rows; // a row opens at most one batch
    if (!readGroups && enoughIds && this.#anySuppressed === false) {
      for (const hash of unknown) this.#byHash.set(hash, []);
      return undefined;
    }
    return this.#tx.run(async (db) => {
      await this.#ids.rows.reserve(db, needs.rows);
      await this.#ids.groups.reserve(db, needs.groups.length);
      await this.#ids.batches.reserve(db, needs.rows);
      this.#fileHadGroups ??= await hasGroups(db, this.#fileId);
      if (unknown.length > 0 && (this.#fileHadGroups || this.#trimmed))
        this.#know(await loadGroups(db, this.#fileId, { hashes: unknown }));
      for (const hash of unknown) if (!this.#byHash.has(hash)) this.#byHash.set(hash, []);
      this.#anySuppressed ??= await anySuppressed(db);
      this.#suppressed = this.#anySuppressed ? await suppressedAmong(db, needs.phones) : undefined;
    });
  }

  prepareSettle(doubts: readonly PlacedKey[]): Promise<void> {
    const writes = this.#take();
    return this.#tx.run(async (db) => {
      await this.#send(db, writes);
      const ids = [...new Set(doubts.map((d) => d.groupId))].filter((id) => !this.#groups.has(id));
      if (ids.length > 0) this.#know(await loadGroups(db, this.#fileId, { ids }));
      await this.#ids.batches.reserve(db, doubts.length);
      this.#placed = await placedRowsMatching(db, this.#fileId, doubts);
    });
  }

  /** Groups read from the journal, with the changes to their batches not sent yet. */
  #know(loaded: Awaited<ReturnType<typeof loadGroups>>): void {
    for (const group of loaded.groups) {
      if (this.#groups.has(group.id)) continue;
      group.held = group.held.filter((id) => !this.#writes.released.has(id));
      this.#remember(group);
      for (const batchId of group.held) {
        const phones = this.#writes.numbers.get(batchId) ?? loaded.phones.get(batchId) ?? [];
        this.#held.set(batchId, { group, phones });
      }
    }
  }

  #remember(group: GroupRecord): void {
    this.#groups.set(group.id, group);
    const bucket = this.#byHash.get(group.keyHash);
    if (bucket) bucket.push(group);
    else this.#byHash.set(group.keyHash, [group]);
  }

  /** Forgets the least recently found groups past GROUPS_KEPT (whole key hashes at a time). */
  #trim(): void {
    for (const group of this.#groups.values()) {
      if (this.#groups.size <= GROUPS_KEPT) return;
      for (const g of this.#byHash.get(group.keyHash) ?? [group]) {
        this.#groups.delete(g.id);
        for (const batchId of g.held) this.#held.delete(batchId);
      }
      this.#byHash.delete(group.keyHash);
      this.#trimmed = true;
    }
  }

  saveHeader(header: FileHeader): void {
    this.#writes.header = JSON.stringify(header);
  }
  addRow(row: PlannedRow, onId?: (rowId: number) => void): void {
    const id = this.#ids.rows.take();
    this.#writes.addRow(id, row);
    if (onId) this.#waiting.push([onId, id]);
  }
  flushRows(): void {
    for (const [onId, id] of this.#waiting) onId(id);
    this.#waiting = [];
    this.#rowsFlushed = this.#writes.rows.id.length;
  }
  dropRows(): void {
    this.#writes.dropRowsFrom(this.#rowsFlushed);
    this.#waiting = [];
  }
  moveKeptRow(rowId: number): void {
    this.flushRows(); // the rows read before it keep lower ids
    this.#writes.moves.push([rowId, this.#ids.rows.take()]);
  }
  keptNumbers(): Iterable<[groupId: number, phone: string]> {
    return this.#options.kept ?? [];
  }
  keepInvalidCells(rowId: number, cells: readonly string[]): void {
    this.#writes.invalidCells.push([rowId, JSON.stringify(cells)]);
  }
  whySuppressed(phone: string): string | undefined {
    return this.#suppressed?.get(phone);
  }
  markDuplicate(rowId: number, duplicateOf: number): void {
    this.#writes.duplicates.push([rowId, duplicateOf]);
  }
  setRowBatch(rowId: number, batchId: number): void {
    this.#writes.rowBatches.push([rowId, batchId]);
  }
  /** Loaded by prepareSettle, for the doubts it was given (the planner asks for those). */
  placedRowsMatching(_keys: Iterable<PlacedKey>): Array<[number, number, string]> {
    return this.#placed;
  }

  findGroup(key: GroupKey): number | undefined {
    const bucket = this.#byHash.get(key.keyHash);
    if (!bucket) throw notPrepared(`the group of key hash ${key.keyHash}`);
    const found = bucket.find(
      (g) =>
        g.appId === key.appId && g.templateId === key.templateId && g.datasJson === key.datasJson,
    );
    if (found) {
      // found again: the most recent
      this.#groups.delete(found.id);
      this.#groups.set(found.id, found);
    }
    return found?.id;
  }
  insertGroup(key: GroupKey): number {
    const id = this.#ids.groups.take();
    this.#writes.groups.push({ id, key });
    this.#remember({ id, ...key, held: [] });
    return id;
  }
  groupValues(groupId: number): { appId: string; templateId: string; datas: string[] } {
    const g = this.#groups.get(groupId);
    if (!g) throw notPrepared(`group ${groupId}`);
    return { appId: g.appId, templateId: g.templateId, datas: JSON.parse(g.datasJson) as string[] };
  }

  heldBatchOf(groupId: number): HeldBatch | undefined {
    const g = this.#groups.get(groupId);
    if (!g) throw notPrepared(`group ${groupId}`);
    const id = g.held.at(-1);
    return id === undefined ? undefined : { id, phones: [...(this.#held.get(id)?.phones ?? [])] };
  }
  insertBatch(groupId: number, now: string): number {
    const id = this.#ids.batches.take();
    this.#writes.batches.set(id, { groupId, reqId: newReqId(), now });
    const group = this.#groups.get(groupId);
    if (group) {
      group.held.push(id);
      this.#held.set(id, { group, phones: [] });
    }
    return id;
  }
  saveBatchNumbers(batchId: number, phones: readonly string[]): void {
    const saved = [...phones];
    this.#writes.numbers.set(batchId, saved);
    const held = this.#held.get(batchId);
    if (held) held.phones = saved;
  }
  releaseBatch(batchId: number): void {
    this.#writes.released.add(batchId);
    const held = this.#held.get(batchId);
    if (!held) return;
    held.group.held = held.group.held.filter((id) => id !== batchId);
    this.#held.delete(batchId);
  }
  releaseHeldBatches(): void {
    this.#writes.releaseAllHeld = true;
    for (const { group } of this.#held.values()) group.held = [];
    this.#held.clear();
  }
  sendFirst(batchIds: Iterable<number>): void {
    const ids = [...batchIds];
    this.#writes.first.push(...ids); // marked in the journal, in this intake's transaction
    this.#firstPending.push(...ids);
  }
  finishIntakeCounts(counts: IntakeCounts): void {
    this.#writes.counts = { ...counts };
  }

  commits(): number {
    return this.#commits;
  }

  /**
   * Runs `write` (gathering). Once SEND_ROWS rows wait they are sent while the next chunks are
   * planned (one send at a time: the one before is awaited); once the transaction holds enough
   * rows it is committed the same way. A commit that hands the check turn over is awaited.
   */
  writeInBulk(rows: number, write: () => void): Awaitable<void> {
    write();
    this.#rowsInTransaction += rows;
    this.#rowsUnsent += rows;
    // Handing the check turn over waits: no row of this file is checked until it is back.
    if (this.#passWanted) return this.commit();
    const commit = this.#rowsInTransaction >= this.#commitSize;
    // The parser hands rows over with no turn of the event loop between chunks: while a send is
    // out, a turn a chunk lets its answer in, and the next send leaves as soon as it is made.
    if (!commit && this.#rowsUnsent < SEND_ROWS)
      return this.#unanswered > 0 ? nextTurn() : undefined;
    const before = this.#inFlight;
    const sent = commit ? this.#commitStep(this.#take(), false) : this.#sendStep(this.#take());
    sent.catch(() => undefined); // seen by the next step, or by awaiting it as `before`
    this.#unanswered++;
    void sent.finally(() => this.#unanswered--).catch(() => undefined);
    this.#inFlight = sent;
    return before;
  }

  /** Sends the writes while the next chunks are planned; a leader asks whether a follower waits. */
  #sendStep(writes: PlanWrites): Promise<void> {
    return this.#tx.run(async (db) => {
      await this.#send(db, writes);
      if (this.#options.role === 'leader') this.#passWanted = await checkTurnWanted(db);
    });
  }

  commit(): Promise<void> {
    this.#inFlight = undefined;
    return this.#commitStep(this.#take(), true);
  }

  /**
   * Sends the writes and commits, then hands the check turn over if asked and `awaited` (the
   * caller plans nothing until it is back); the counts are settled now, in the order of calls.
   */
  #commitStep(writes: PlanWrites, awaited: boolean): Promise<void> {
    const first = this.#firstPending;
    this.#firstPending = [];
    this.#rowsInTransaction = 0;
    this.#commitSize = Math.min(this.#commitSize * 2, ROWS_PER_COMMIT);
    return this.#tx.run(async (db) => {
      await this.#send(db, writes);
      if (await this.#tx.commitOpen()) {
        this.#commits++;
        if (first.length > 0) this.#options.sendFirst?.(first); // the batches it marked
      }
      if (awaited && this.#passWanted && this.#options.turn && this.#options.passes) {
        // Between two transactions: nothing of this file is checked and not yet committed.
        this.#passWanted = false;
        await passCheckTurn(this.#options.turn, this.#options.passes);
      }
    });
  }

  async #send(db: pg.ClientBase, writes: PlanWrites): Promise<void> {
    this.#ids.add(await writes.send(db, this.#fileId));
  }

  /**
   * The writes gathered, to send, their parameters fixed now (PlanWrites.seal) with the ids they
   * should reserve for the chunks planned while they wait; gathering starts anew. Groups are
   * forgotten here, so that every group not known is in the journal (or in a send before the
   * next read, which follows it).
   */
  #take(): PlanWrites {
    const writes = this.#writes;
    writes.topUp = this.#ids.topUps(2 * SEND_ROWS, 3 * SEND_ROWS); // two sends' worth left: three
    writes.seal(this.#fileId);
    this.#writes = new PlanWrites();
    this.#rowsFlushed = 0;
    this.#rowsUnsent = 0;
    this.#trim();
    return writes;
  }

  rowsLost(): boolean {
    return this.#tx.lost;
  }
  assertNothingLost(): void {
    if (this.#tx.lost) throw this.#tx.lostError();
  }
}

function notPrepared(what: string): SmsdropError {
  return new SmsdropError(
    'E_INTERNAL',
    `the PostgreSQL plan store was asked for ${what} it did not load (prepareChunk/prepareSettle)`,
  );
}
