// Writing a file's rows into the journal, a chunk per transaction (journalling a million rows
// takes seconds, not minutes). Each row is written once. A valid row joins its group (app,
// template, values) and, by the planning rule (src/plan), that group's open batch: so when intake
// ends, every batch is written with its numbers and nothing is left to plan. The same number
// twice in a group is kept once; the repeats are recorded as duplicates of it. Which numbers a
// group already has is asked of a Bloom filter (seenNumbers.ts): a row it cannot vouch for is a
// "doubt", journalled without a batch and settled exactly from the journal once the file is read
// (settleDoubts); its group keeps its last batch held until then, so no extra request is made.
// A number that another file already sent the group's message to, within the repeat window, is
// recorded as a duplicate of that file's row and not placed (sentBefore.ts).
//
// A batch is held (next_attempt_at = HELD, never due) while it may still take numbers, and
// released (due now) once it is full, or when intake ends: so sending may start on full batches
// while the rest of the file is still being read, and never touches a batch still filling.
// A batch is also released when its group's last row is read, when intake counts the file's
// groups (intake/groupCounts.ts): no later row can join it. A batch filled (or whose
// group ended) in one chunk is released when the next chunk is written: its rows are then
// followed by more of the file, so none of them can be the half-written end of a file still
// being copied (the caller checks the file's size after each chunk, before sending can run).
import { hash } from 'node:crypto';
import { GroupCounts } from '../intake/groupCounts.js';
import { groupKeyOf, type IntakeRow } from '../intake/row.js';
import { placeNumber } from '../plan/index.js';
import { HELD, newReqId, sendFirst } from './batches.js';
import { bulkCommits, bulkLosses, bulkWrite, commitBulk, RowsLostError, startBulkRamp } from './bulk.js';
import { intentsEnabled } from './intents.js';
import { type Journal, nowIso, sql, sqlRaw } from './open.js';
import { createRowInserter } from './rowInserter.js';
import { SeenNumbers } from './seenNumbers.js';
import type { SentBefore, SentBeforeLookup } from './sentBefore.js';
import { ROW_INTAKE } from './states.js';
import { suppressionCheck } from './suppressed.js';

/**
 * A row as intake made it (see IntakeRow for the meaning of each field), or, with keptRowId, a
 * row an interrupted intake left in the journal, found again at its line (see restartIntake).
 */
export type RowToJournal = IntakeRow & { keptRowId?: number };

/** A group as intake sees it: its id and its open batch (the one still taking numbers). */
interface GroupState {
  key: string;
  /** Its slot in the group counts. */
  slot: number;
  groupId: number;
  batchId: number | undefined;
  phones: string[];
  /** phones changed since the batch row was last written */
  dirty: boolean;
  /** Made by this intake, no number placed in it yet: its next number cannot be a repeat. */
  fresh: boolean;
  /** Other files' rows of this message (the repeat window's): their numbers are not sent again. */
  earlier: SentBefore | undefined;
}

/** Groups kept in memory (the most recently opened); the journal holds them all. */
const GROUP_CACHE_SIZE = 20_000;

export interface RowWriterOptions {
  maxPerRequest: number;
  /** Called after closed batches (full, or their group ended) were released (due once the bulk transaction commits). */
  onRelease?: () => void;
  /** Rows of this file already in the journal from an interrupted intake (counted, not rewritten). */
  rowsKept?: number;
  /** The file's rows per group, counted while intake reads: a group's batch is released after its last row. */
  groupCounts?: GroupCounts;
  /** The file's size: the filter of numbers already placed is sized for it (see SeenNumbers). */
  fileBytes?: number;
  /** The filter itself (tests give a tiny one, so that nearly every number is a doubt). */
  seenNumbers?: SeenNumbers;
  /** Other files' rows by message (sentBefore.ts); none: every valid row is sent. */
  sentBefore?: SentBeforeLookup;
}

/**
 * A valid row whose number the group may have already: journalled without a batch until
 * settleDoubts. Its group by id only: most doubts are repeats, and keeping each one's values (the
 * row's own strings) until the file is read cost ~130 bytes a doubt, 2.6 MB for a 4M-row list.
 */
interface Doubt {
  /** Known once the row is written (rowInserter.ts): before the chunk ends. */
  rowId: number;
  groupId: number;
  phone: string;
}

/** Used when the caller does not say how large the file is (32 MB: a million rows of the bench's kind). */
const DEFAULT_FILE_BYTES = 32_000_000;

export interface RowWriter {
  /** Writes one chunk of rows, in the intake's bulk transaction (see bulk.ts). */
  write(rows: readonly RowToJournal[]): void;
  /** Writes the open batches and the file's counts, and commits. Call once, after the last chunk. */
  finish(): IntakeCounts;
  /** Reading stopped early (the file is refused): settles the doubts and writes the open batches' numbers, releasing none. */
  abandon(): void;
}

/** A file's rows, invalid rows and duplicates, of which `repeats` repeat another file's rows. */
export interface IntakeCounts {
  rows: number;
  invalid: number;
  duplicates: number;
  repeats: number;
}

export function createRowWriter(db: Journal, fileId: number, options: RowWriterOptions): RowWriter {
  const limits = { maxPerRequest: options.maxPerRequest };
  const groups = new Map<string, GroupState>();
  const counts: IntakeCounts = { rows: options.rowsKept ?? 0, invalid: 0, duplicates: 0, repeats: 0 };
  const rowsOut = createRowInserter(db);
  const seen = options.seenNumbers ?? SeenNumbers.forFile(options.fileBytes ?? DEFAULT_FILE_BYTES);
  // Rows an interrupted intake left (restartIntake) are in batches already: a number of theirs
  // read again, earlier in the file than its kept row, is a repeat of it.
  for (const [groupId, phone] of sqlRaw(db, "SELECT group_id, phone FROM rows WHERE file_id = ? AND intake = 'valid'").iterate(fileId) as Iterable<[number, string]>) {
    seen.add(groupId, phone);
  }
  const doubts: Doubt[] = [];
  /** Groups (ids) with doubts: their last batch stays held until the doubts are settled. */
  const groupsWithDoubts = new Set<number>();
  const findGroups = sql(db, 'SELECT id, app_id, template_id, datas FROM groups WHERE file_id = ? AND key_hash = ?');
  const insertGroup = sql(db, 'INSERT INTO groups (file_id, key_hash, app_id, template_id, datas) VALUES (?, ?, ?, ?, ?)');
  // Only a held batch can take more numbers: a released one may be on its way already.
  const heldBatchOf = sql(
    db,
    `SELECT b.id, n.phones FROM batches b LEFT JOIN batch_numbers n ON n.batch_id = b.id
     WHERE b.group_id = ? AND b.state = 'planned' AND b.next_attempt_at = ${HELD} ORDER BY b.id DESC LIMIT 1`,
  );
  const insertBatch = sql(
    db,
    `INSERT INTO batches (file_id, group_id, req_id, numbers, state, next_attempt_at, created_at, updated_at)
     VALUES (?, ?, ?, 0, 'planned', ${HELD}, ?, ?)`,
  );
  const release = sql(db, 'UPDATE batches SET next_attempt_at = 0 WHERE id = ?');
  const KEPT_COLUMNS = 'file_id, line, phone_raw, phone, group_id, intake, error, duplicate_of, extras, batch_id';
  const readKept = sqlRaw(db, `SELECT ${KEPT_COLUMNS} FROM rows WHERE id = ?`);
  const deleteKept = sql(db, 'DELETE FROM rows WHERE id = ?');
  const insertKept = sql(db, `INSERT INTO rows (${KEPT_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`);

  /** A kept row gets a new id here, between the rows read before and after its line. */
  function moveKeptRow(id: number): void {
    rowsOut.flush(); // the rows read before it keep lower ids
    const values = readKept.get(id) as unknown[];
    deleteKept.run(id); // (first: a unique index of rows by number, dropped by migration 4, once required it)
    insertKept.run(...values);
  }
  // Rows of suppressed numbers are rejected with the reason (none to look up: no cost).
  const suppressedWhy = suppressionCheck(db);
  const insertCells = sql(db, 'INSERT INTO invalid_cells (row_id, file_id, cells) VALUES (?, ?, ?)');
  const writePhones = sql(db, 'INSERT INTO batch_numbers (batch_id, phones) VALUES (?, ?) ON CONFLICT (batch_id) DO UPDATE SET phones = excluded.phones');
  const writeCount = sql(db, 'UPDATE batches SET numbers = ? WHERE id = ?');

  function saveBatch(state: GroupState): void {
    if (!state.dirty || state.batchId === undefined) return;
    writePhones.run(state.batchId, state.phones.join(','));
    writeCount.run(state.phones.length, state.batchId);
    state.dirty = false;
  }

  /**
   * Batches that take no more numbers (full, or their group ended), released when the next chunk
   * is written (or at finish). Until then they are still held in the journal, so a group loaded
   * again must not take them up (see loadOrCreateGroup). Each with the count of bulk commits when
   * it closed: with intents (intents.ts) the journal does not commit before a request leaves, so a
   * batch is released only once a commit holds it, its numbers and its rows.
   */
  const closed = new Map<number, number>();
  const releaseOnlyCommitted = intentsEnabled(db);
  if (releaseOnlyCommitted) startBulkRamp(db);

  /** The group's batch takes no more numbers (full, or the group ended): write it. The group opens a new one next time. */
  function closeBatch(state: GroupState): void {
    saveBatch(state);
    closed.set(state.batchId!, bulkCommits(db));
    state.batchId = undefined;
    state.phones = [];
  }

  /**
   * The group's last row was read: its batch can take no more numbers, and it is not needed again.
   * Unless some of its rows are doubts: one may yet be a new number, which joins that batch.
   */
  function endGroup(state: GroupState): void {
    if (state.batchId !== undefined && state.phones.length > 0 && !groupsWithDoubts.has(state.groupId)) closeBatch(state);
    else saveBatch(state); // with doubts: still held, for the new numbers among them (no batch: nothing to save)
    groups.delete(state.key);
  }

  function releaseClosedBatches(): void {
    const commits = bulkCommits(db);
    let released = 0;
    for (const [batchId, commitsWhenClosed] of closed) {
      if (releaseOnlyCommitted && commitsWhenClosed === commits) continue;
      release.run(batchId);
      closed.delete(batchId);
      released++;
    }
    if (released > 0) options.onRelease?.();
  }

  function groupOf(appId: string, templateId: string, datas: string[]): GroupState {
    const key = cacheKeyOf(appId, templateId, datas);
    const cached = groups.get(key);
    // First in, first out: moving an entry on every hit costs more than the rare reload of a
    // busy group that was evicted (one indexed read).
    if (cached) return cached;
    const state = loadOrCreateGroup(key, appId, templateId, datas);
    if (groups.size >= GROUP_CACHE_SIZE) {
      const [oldestKey, oldest] = groups.entries().next().value as [string, GroupState];
      saveBatch(oldest);
      groups.delete(oldestKey);
    }
    groups.set(key, state);
    return state;
  }

  function loadOrCreateGroup(key: string, appId: string, templateId: string, datas: readonly string[]): GroupState {
    const datasJson = JSON.stringify(datas);
    // 48 bits of MD5 narrow the search; the full values are compared, so a collision is harmless.
    // (Of the journal's own key form: journals written before keep finding their groups.)
    const keyHash = parseInt(hash('md5', groupKeyOf(appId, templateId, datas)).slice(0, 12), 16);
    const candidates = findGroups.all(fileId, keyHash) as { id: number; app_id: string; template_id: string; datas: string }[];
    const found = candidates.find((g) => g.app_id === appId && g.template_id === templateId && g.datas === datasJson);
    const slot = GroupCounts.slotOf(appId, templateId, datas);
    const earlier = options.sentBefore?.(keyHash, appId, templateId, datasJson);
    if (!found) {
      const groupId = Number(insertGroup.run(fileId, keyHash, appId, templateId, datasJson).lastInsertRowid);
      return { key, slot, groupId, batchId: undefined, phones: [], dirty: false, fresh: true, earlier };
    }
    const latest = heldBatchOf.get(found.id) as { id: number; phones: string | null } | undefined;
    // A batch waiting for its release is closed: counted as ended, it may be sent with the numbers
    // it has, so a row found later (group counts that were wrong) must start a new batch.
    const held = latest && !closed.has(latest.id) ? latest : undefined;
    return { key, slot, groupId: found.id, batchId: held?.id, phones: held && held.phones ? held.phones.split(',') : [], dirty: false, fresh: false, earlier };
  }

  /** The batch the group's next number goes into (a new one when it has none open, or it is full). */
  function openBatchOf(state: GroupState, now: string): number {
    if (placeNumber(state.batchId === undefined ? undefined : state.phones.length, limits) === 'new') {
      saveBatch(state);
      state.batchId = Number(insertBatch.run(fileId, state.groupId, newReqId(), now, now).lastInsertRowid);
      state.phones = [];
    }
    return state.batchId!;
  }

  function addToBatch(state: GroupState, phone: string): void {
    state.phones.push(phone);
    state.dirty = true;
    if (state.phones.length >= limits.maxPerRequest) closeBatch(state);
  }

  /**
   * Places the number in a batch and returns its id. An international number (00...) goes alone
   * in a batch of its own: the provider refuses international messages in bulk (160059).
   */
  function batchForNumber(state: GroupState, phone: string, now: string): number {
    if (!phone.startsWith('00')) {
      const batchId = openBatchOf(state, now);
      addToBatch(state, phone);
      return batchId;
    }
    const batchId = Number(insertBatch.run(fileId, state.groupId, newReqId(), now, now).lastInsertRowid);
    writePhones.run(batchId, phone);
    writeCount.run(1, batchId);
    closed.set(batchId, bulkCommits(db));
    return batchId;
  }

  function placeValidRow(row: RowToJournal, state: GroupState, extras: string | null, now: string): void {
    const phone = row.phone!;
    // Before the filter: a later row with the same number repeats the earlier file's row too.
    const earlierRow = state.earlier?.rowOf(phone);
    if (earlierRow !== undefined) {
      rowsOut.add([fileId, row.line, row.phoneRaw, phone, state.groupId, ROW_INTAKE.duplicate, null, extras, null, earlierRow]);
      counts.duplicates++;
      counts.repeats++;
      return;
    }
    // A group's first number needs no asking: one-row groups (personalised values) make no doubts.
    if (!state.fresh && seen.mayHave(state.groupId, phone)) {
      const doubt: Doubt = { rowId: 0, groupId: state.groupId, phone };
      rowsOut.add([fileId, row.line, row.phoneRaw, phone, state.groupId, ROW_INTAKE.valid, null, extras, null, null], (rowId) => {
        doubt.rowId = rowId;
        doubts.push(doubt);
      });
      groupsWithDoubts.add(state.groupId);
      return;
    }
    seen.add(state.groupId, phone);
    state.fresh = false;
    rowsOut.add([fileId, row.line, row.phoneRaw, phone, state.groupId, ROW_INTAKE.valid, null, extras, batchForNumber(state, phone, now), null]);
  }

  /**
   * The file is read: each doubt is a repeat of the row that has its number in its group (one in a
   * batch, or the first doubt with it), or else the first of its number, placed now. The filter
   * only ever says "maybe" more often as it fills, so every row after a doubt with the same number
   * is a doubt too, and the row placed for a number, if any, comes before all of them.
   */
  function settleDoubts(now: string): Set<number> {
    const joined = new Set<number>();
    if (doubts.length === 0) return joined;
    const keys = db.temporaryTableName(`doubt_keys_${fileId}`);
    db.exec(`CREATE TEMP TABLE ${keys} (group_id INTEGER NOT NULL, phone TEXT NOT NULL, PRIMARY KEY (group_id, phone)) WITHOUT ROWID`);
    try {
      const addKey = db.prepare(`INSERT OR IGNORE INTO temp.${keys} (group_id, phone) VALUES (?, ?)`);
      for (const d of doubts) addKey.run(d.groupId, d.phone);
      // One pass over the file's rows (no index has them by number); only the matches come back.
      const placed = db
        .prepare(
          `SELECT r.id, r.group_id, r.phone FROM rows r INDEXED BY rows_by_file
           WHERE r.file_id = ? AND r.intake = 'valid' AND r.batch_id IS NOT NULL
             AND EXISTS (SELECT 1 FROM temp.${keys} k WHERE k.group_id = r.group_id AND k.phone = r.phone)`,
        )
        .raw()
        .all(fileId) as [number, number, string][];
      const firstRowOf = new Map(placed.map(([id, groupId, phone]) => [`${groupId}\u0000${phone}`, id]));
      const markDuplicate = sql(db, "UPDATE rows SET intake = 'duplicate', duplicate_of = ? WHERE id = ?");
      const groupById = sql(db, 'SELECT app_id, template_id, datas FROM groups WHERE id = ?');
      const setBatch = sql(db, 'UPDATE rows SET batch_id = ? WHERE id = ?');
      for (const d of doubts) {
        const key = `${d.groupId}\u0000${d.phone}`;
        const first = firstRowOf.get(key);
        if (first !== undefined) {
          markDuplicate.run(first, d.rowId);
          counts.duplicates++;
          continue;
        }
        firstRowOf.set(key, d.rowId);
        const g = groupById.get(d.groupId) as { app_id: string; template_id: string; datas: string };
        const state = groupOf(g.app_id, g.template_id, JSON.parse(g.datas) as string[]);
        const batchId = batchForNumber(state, d.phone, now);
        setBatch.run(batchId, d.rowId);
        joined.add(batchId);
      }
    } finally {
      db.exec(`DROP TABLE temp.${keys}`);
    }
    doubts.length = 0;
    groupsWithDoubts.clear();
    return joined;
  }

  let countsWereReady = false;
  /**
   * The group counts were made while intake read (groupCounts.ts): once they are complete, the
   * groups in memory whose rows were all read before then have ended too.
   */
  function endGroupsAllRead(counts: GroupCounts): void {
    if (countsWereReady || !counts.ready) return;
    countsWereReady = true;
    for (const state of [...groups.values()]) if (counts.allRead(state.slot)) endGroup(state);
  }

  const writeChunk = (rows: readonly RowToJournal[]): void => {
    try {
      writeRows(rows);
      rowsOut.flush();
    } finally {
      rowsOut.drop(); // after a failure: the rows still queued are not in the journal, nor their doubts
    }
  };

  const writeRows = (rows: readonly RowToJournal[]): void => {
    releaseClosedBatches();
    if (options.groupCounts) endGroupsAllRead(options.groupCounts);
    const now = nowIso();
    for (const row of rows) {
      if (row.keptRowId !== undefined) {
        // Counted in rowsKept. Not counted down in the group counts either, so its group's last
        // batch waits for the end of the file: a resumed file only sends later, never early.
        moveKeptRow(row.keptRowId);
        continue;
      }
      counts.rows++;
      const extras = hasKeys(row.extras) ? JSON.stringify(row.extras) : null;
      const state = row.appId !== undefined && row.templateId !== undefined ? groupOf(row.appId, row.templateId, row.datas) : undefined;
      // Invalid as written, without a number or a group, or a suppressed number (suppressed.ts).
      const error = row.error ?? (!row.phone || !state ? 'row has no phone number, appId or templateId' : suppressedWhy?.(row.phone));
      if (error !== undefined || !state) {
        // Kept with its group when it has one, so the rejected file can show its values.
        const cells = row.cells;
        const keepCells = cells ? (rowId: number) => insertCells.run(rowId, fileId, JSON.stringify(cells)) : undefined;
        rowsOut.add([fileId, row.line, row.phoneRaw, row.phone ?? null, state?.groupId ?? null, ROW_INTAKE.invalid, error ?? null, extras, null, null], keepCells);
        counts.invalid++;
      } else {
        placeValidRow(row, state, extras, now);
      }
      if (state && options.groupCounts?.rowRead(state.slot)) endGroup(state);
    }
  };

  const saveOpenBatches = (): void => groups.forEach(saveBatch);

  const finishIntake = (): IntakeCounts => {
    // Their rows lie anywhere in the file, and the result file is written in row order as answers
    // come in: so these go before the batches released while the file was read (see sendFirst).
    sendFirst(db, settleDoubts(nowIso()));
    saveOpenBatches();
    sql(db, `UPDATE batches SET next_attempt_at = 0 WHERE file_id = ? AND next_attempt_at = ${HELD}`).run(fileId);
    sql(db, 'UPDATE files SET rows = ?, invalid = ?, duplicates = ?, repeats = ? WHERE id = ?').run(counts.rows, counts.invalid, counts.duplicates, counts.repeats, fileId);
    return { ...counts };
  };

  // Rows written in a bulk transaction that was then rolled back are not in the journal.
  const lossesAtStart = bulkLosses(db);
  const assertNothingLost = (): void => {
    if (bulkLosses(db) !== lossesAtStart) throw new RowsLostError();
  };
  return {
    write: (rows) => {
      assertNothingLost();
      bulkWrite(db, rows.length, () => writeChunk(rows));
    },
    // After a loss the open batches may be gone with the rows: writing their numbers would leave
    // numbers without a batch, which a later batch given the same id would take up.
    // The doubts are settled too, so that each row read is counted: a repeat, or in a batch.
    abandon: () => {
      if (bulkLosses(db) === lossesAtStart) bulkWrite(db, 0, () => {
        settleDoubts(nowIso());
        saveOpenBatches();
      });
    },
    finish: () => {
      assertNothingLost();
      let result = { ...counts };
      bulkWrite(db, 0, () => (result = finishIntake()));
      commitBulk(db);
      return result;
    },
  };
}

/**
 * A group's key in the writer's cache, made for every row: its parts joined by NUL, about twice as
 * quick to make as groupKeyOf's JSON. No id or value holds a NUL in practice, and then the parts
 * can be told apart again from the key, so two groups never share one. A part with a NUL gets the
 * JSON form after a NUL, which no other key starts with (an id is never empty).
 */
export function cacheKeyOf(appId: string, templateId: string, datas: readonly string[]): string {
  let key = appId + '\u0000' + templateId;
  let nul = appId.includes('\u0000') || templateId.includes('\u0000');
  for (let i = 0; i < datas.length && !nul; i++) {
    const value = datas[i]!;
    nul = value.includes('\u0000');
    key += '\u0000' + value;
  }
  return nul ? '\u0000' + JSON.stringify([appId, templateId, datas]) : key;
}

function hasKeys(record: Record<string, string>): boolean {
  for (const _ in record) return true;
  return false;
}
