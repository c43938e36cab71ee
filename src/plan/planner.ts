// The planner intake drives: it reads a file's rows chunk by chunk and tells the journal (through
// PlanStore) what each row is and which batch it joins, so that when intake ends every batch is
// written with its numbers and nothing is left to plan. A valid row joins its group (app,
// template, values) and, by placeNumber (index.ts), that group's open batch. The same number twice
// in a group is kept once; the repeats are recorded as duplicates of it, found through the doubts
// (doubts.ts). A number another file already sent the group's message to, within the repeat
// window, is recorded as a duplicate of that file's row and not placed (journal/sentBefore.ts).
//
// A batch is held (never due) while it may still take numbers, and released once it is full, when
// its group's last row is read (intake/groupCounts.ts: no later row can join it), or when intake
// ends: so sending may start on closed batches while the rest of the file is read, and never
// touches a batch still filling (closedBatches.ts says when a closed batch goes).
import { GroupCounts } from '../intake/groupCounts.js';
import { encodeExtras } from '../journalRules/extras.js';
import { ClosedBatches } from './closedBatches.js';
import { Doubts } from './doubts.js';
import { ReleaseNotices } from './releaseNotices.js';
import { cacheKeyOf, GroupCache, type GroupState, groupKey } from './groups.js';
import { checkedLimits, type PlanLimits, placeNumber } from './index.js';
import { SeenNumbers } from './seenNumbers.js';
import { andFinally, andThen } from './awaitable.js';
import { prepareChunk, prepareSettle } from './prepare.js';
import type { Awaitable } from '../ports/awaitable.js';
import type { IntakeCounts, PlanStore, SentBeforeLookup } from './store.js';
import type { PlannerOptions, RowToJournal, RowWriter } from './writer.js';

export type { IntakeCounts } from './store.js';
export type { PlannerOptions, RowToJournal, RowWriter, SyncRowWriter } from './writer.js';

/**
 * Used when the caller does not say how large the file is (32 MB: a million rows of the bench's
 * kind).
 */
const DEFAULT_FILE_BYTES = 32_000_000;
const NO_GROUP = 'row has no phone number, appId or templateId';

export class Planner implements RowWriter {
  readonly #store: PlanStore;
  readonly #limits: PlanLimits;
  readonly #notices: ReleaseNotices;
  readonly #groupCounts: GroupCounts | undefined;
  readonly #groups = new GroupCache();
  readonly #sentBefore: SentBeforeLookup | undefined;
  readonly #doubts: Doubts;
  readonly #closed: ClosedBatches;
  readonly #counts: IntakeCounts;
  #countsWereReady = false;

  constructor(store: PlanStore, options: PlannerOptions) {
    this.#store = store;
    this.#limits = checkedLimits({ maxPerRequest: options.maxPerRequest });
    this.#groupCounts = options.groupCounts;
    this.#counts = { rows: options.rowsKept ?? 0, invalid: 0, duplicates: 0, repeats: 0 };
    this.#closed = new ClosedBatches(store);
    this.#notices = new ReleaseNotices(
      store,
      this.#closed,
      options.onRelease,
      options.sendersWaiting,
      options.groupCounts,
    );
    this.#sentBefore = options.sentBefore;
    this.#doubts = new Doubts(
      options.seenNumbers ?? SeenNumbers.forFile(options.fileBytes ?? DEFAULT_FILE_BYTES),
    );
    // Rows an interrupted intake left (restartIntake) are in batches already: a number of theirs
    // read again, earlier in the file than its kept row, is a repeat of it.
    for (const [groupId, phone] of store.keptNumbers()) this.#doubts.placed(groupId, phone);
  }

  write(rows: readonly RowToJournal[]): Awaitable<void> {
    this.#store.assertNothingLost();
    return andThen(this.#prepareChunk(rows), () =>
      andThen(
        this.#store.writeInBulk(rows.length, () => this.#writeChunk(rows)),
        () => this.#notices.afterChunk(rows.length),
      ),
    );
  }

  // After a loss the open batches may be gone with the rows: writing their numbers would leave
  // numbers without a batch, which a later batch given the same id would take up. The doubts are
  // settled too, so that each row read is counted: a repeat, or in a batch.
  abandon(): Awaitable<void> {
    // What is kept is committed before the requests in flight are waited for (refusal).
    return andFinally(
      () => {
        if (this.#store.rowsLost()) return;
        return andThen(this.#prepareSettle(), () => {
          if (this.#store.rowsLost()) return; // while the doubts were looked up
          return this.#store.writeInBulk(0, () => {
            this.#settleDoubts(new Date().toISOString());
            this.#saveOpenBatches();
          });
        });
      },
      () => this.#store.commit(),
    );
  }

  finish(): Awaitable<IntakeCounts> {
    this.#store.assertNothingLost();
    const written = andThen(this.#prepareSettle(), () => {
      this.#store.assertNothingLost(); // while the doubts were looked up
      return this.#store.writeInBulk(0, () => {
        // Their rows lie anywhere in the file, and the result file is written in row order as
        // answers come in: so these go before the batches released while the file was read.
        this.#store.sendFirst(this.#settleDoubts(new Date().toISOString()));
        this.#saveOpenBatches();
        this.#store.releaseHeldBatches();
        this.#store.finishIntakeCounts(this.#counts);
      });
    });
    return andThen(written, () =>
      andThen(this.#store.commit(), () => {
        this.#notices.tellCommitted();
        return { ...this.#counts };
      }),
    );
  }

  /** What the chunk's rows will ask (a store on a server, the window's look-up), loaded first. */
  #prepareChunk(rows: readonly RowToJournal[]): Awaitable<void> {
    return prepareChunk(this.#store, this.#sentBefore, this.#groups, rows);
  }

  #prepareSettle(): Awaitable<void> {
    return prepareSettle(this.#store, this.#sentBefore, this.#doubts.list());
  }

  #writeChunk(rows: readonly RowToJournal[]): void {
    try {
      this.#writeRows(rows);
      this.#store.flushRows();
    } finally {
      // after a failure: the rows still queued are not in the journal, nor their doubts
      this.#store.dropRows();
    }
  }

  #writeRows(rows: readonly RowToJournal[]): void {
    this.#notices.released(this.#closed.release());
    if (this.#groupCounts) this.#endGroupsAllRead(this.#groupCounts);
    const now = new Date().toISOString();
    for (const row of rows) {
      if (row.keptRowId !== undefined) {
        // Counted in rowsKept. Not counted down in the group counts either, so its group's last
        // batch waits for the end of the file: a resumed file only sends later, never early.
        this.#store.moveKeptRow(row.keptRowId);
        continue;
      }
      this.#counts.rows++;
      const extras = encodeExtras(row.extras);
      const state =
        row.appId !== undefined && row.templateId !== undefined
          ? this.#groupOf(row.appId, row.templateId, row.datas)
          : undefined;
      // Invalid as written, without a number or a group, or a suppressed number.
      const error =
        row.error ?? (!row.phone || !state ? NO_GROUP : this.#store.whySuppressed(row.phone));
      if (error !== undefined || !state) this.#writeInvalidRow(row, state, extras, error);
      else this.#placeValidRow(row, state, extras, now);
      if (state && this.#groupCounts?.rowRead(state.slot)) this.#endGroup(state);
    }
  }

  /** Kept with its group when it has one, so the rejected file can show its values. */
  #writeInvalidRow(
    row: RowToJournal,
    state: GroupState | undefined,
    extras: string | null,
    error: string | undefined,
  ): void {
    const cells = row.cells;
    const keepCells = cells
      ? (rowId: number) => this.#store.keepInvalidCells(rowId, cells)
      : undefined;
    this.#store.addRow(
      [
        row.line,
        row.phoneRaw,
        row.phone ?? null,
        state?.groupId ?? null,
        'invalid',
        error ?? null,
        extras,
        null,
        null,
      ],
      keepCells,
    );
    this.#counts.invalid++;
  }

  #placeValidRow(row: RowToJournal, state: GroupState, extras: string | null, now: string): void {
    const phone = row.phone!;
    // Before the filter: a later row with the same number repeats the earlier file's row too.
    const earlierRow = state.earlier?.rowOf(phone);
    if (earlierRow !== undefined) {
      this.#store.addRow([
        row.line,
        row.phoneRaw,
        phone,
        state.groupId,
        'duplicate',
        null,
        extras,
        null,
        earlierRow,
      ]);
      this.#counts.duplicates++;
      this.#counts.repeats++;
      return;
    }
    // A group's first number needs no asking: one-row groups (personalised values) make no doubts.
    if (state.fresh) this.#doubts.placed(state.groupId, phone);
    else if (!this.#doubts.placedIfNew(state.groupId, phone)) {
      this.#store.addRow(
        [row.line, row.phoneRaw, phone, state.groupId, 'valid', null, extras, null, null],
        this.#doubts.add(state.groupId, phone),
      );
      return;
    }
    state.fresh = false;
    this.#store.addRow([
      row.line,
      row.phoneRaw,
      phone,
      state.groupId,
      'valid',
      null,
      extras,
      this.#batchForNumber(state, phone, now),
      null,
    ]);
  }

  #groupOf(appId: string, templateId: string, datas: string[]): GroupState {
    const cached = this.#groups.find(appId, templateId, datas);
    if (cached) return cached;
    const state = this.#loadGroup(cacheKeyOf(appId, templateId, datas), appId, templateId, datas);
    const evicted = this.#groups.add(state);
    if (evicted) this.#saveBatch(evicted);
    return state;
  }

  /**
   * A group not in memory, from the journal (made there if new), with its batch still held, if any.
   */
  #loadGroup(key: string, appId: string, templateId: string, datas: readonly string[]): GroupState {
    const journalKey = groupKey(appId, templateId, datas);
    const found = this.#store.findGroup(journalKey);
    const slot = GroupCounts.slotOf(appId, templateId, datas);
    // The repeat guard is asked once per group loaded, not per row.
    const earlier = this.#sentBefore?.(journalKey.keyHash, appId, templateId, journalKey.datasJson);
    if (found === undefined) {
      const groupId = this.#store.insertGroup(journalKey);
      return {
        key,
        appId,
        templateId,
        datas,
        slot,
        groupId,
        batchId: undefined,
        phones: [],
        dirty: false,
        fresh: true,
        earlier,
      };
    }
    const latest = this.#store.heldBatchOf(found);
    // A batch waiting for its release is closed: counted as ended, it may be sent with the numbers
    // it has, so a row found later (group counts that were wrong) must start a new batch.
    const held = latest && !this.#closed.has(latest.id) ? latest : undefined;
    return {
      key,
      appId,
      templateId,
      datas,
      slot,
      groupId: found,
      batchId: held?.id,
      phones: held?.phones ?? [],
      dirty: false,
      fresh: false,
      earlier,
    };
  }

  /**
   * Places the number in a batch and returns its id. An international number (00...) goes alone,
   * in a batch of its own, closed at once: the provider refuses international messages in bulk
   * (160059).
   */
  #batchForNumber(state: GroupState, phone: string, now: string): number {
    if (!phone.startsWith('00')) {
      const batchId = this.#openBatchOf(state, now);
      this.#addToBatch(state, phone);
      return batchId;
    }
    const batchId = this.#store.insertBatch(state.groupId, now);
    this.#store.saveBatchNumbers(batchId, [phone]);
    this.#closed.close(batchId);
    return batchId;
  }

  /**
   * The batch the group's next number goes into (a new one when it has none open, or it is full).
   */
  #openBatchOf(state: GroupState, now: string): number {
    if (
      placeNumber(state.batchId === undefined ? undefined : state.phones.length, this.#limits) ===
      'new'
    ) {
      this.#saveBatch(state);
      state.batchId = this.#store.insertBatch(state.groupId, now);
      state.phones = [];
    }
    return state.batchId!;
  }

  #addToBatch(state: GroupState, phone: string): void {
    state.phones.push(phone);
    state.dirty = true;
    if (state.phones.length >= this.#limits.maxPerRequest) this.#closeBatch(state);
  }

  #saveBatch(state: GroupState): void {
    if (!state.dirty || state.batchId === undefined) return;
    this.#store.saveBatchNumbers(state.batchId, state.phones);
    state.dirty = false;
  }

  /**
   * The group's batch takes no more numbers (full, or the group ended): write it. The group opens a
   * new one next time.
   */
  #closeBatch(state: GroupState): void {
    this.#saveBatch(state);
    this.#closed.close(state.batchId!);
    state.batchId = undefined;
    state.phones = [];
  }

  /**
   * The group's last row was read: its batch can take no more numbers, and it is not needed again.
   * Unless some of its rows are doubts: one may yet be a new number, which joins that batch.
   */
  #endGroup(state: GroupState): void {
    if (
      state.batchId !== undefined &&
      state.phones.length > 0 &&
      !this.#doubts.inGroup(state.groupId)
    ) {
      this.#closeBatch(state);
    } else {
      // with doubts: still held, for the new numbers among them (no batch: nothing to save)
      this.#saveBatch(state);
    }
    this.#groups.delete(state);
  }

  /**
   * The group counts were made while intake read: once they are complete, the groups in memory
   * whose rows were all read before then have ended too.
   */
  #endGroupsAllRead(counts: GroupCounts): void {
    if (this.#countsWereReady || !counts.ready) return;
    this.#countsWereReady = true;
    for (const state of this.#groups.list()) if (counts.allRead(state.slot)) this.#endGroup(state);
  }

  /** Settles the doubts (doubts.ts): returns the batches that new numbers among them joined. */
  #settleDoubts(now: string): Set<number> {
    const settled = this.#doubts.settle(this.#store, (groupId, phone) => {
      const { appId, templateId, datas } = this.#store.groupValues(groupId);
      const state = this.#groupOf(appId, templateId, datas);
      return this.#batchForNumber(state, phone, now);
    });
    this.#counts.duplicates += settled.duplicates;
    return settled.joined;
  }

  #saveOpenBatches(): void {
    this.#groups.forEach((state) => this.#saveBatch(state));
  }
}
