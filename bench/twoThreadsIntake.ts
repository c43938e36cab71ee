// The intake thread of the two-thread floor (twoThreads.ts): a worker that reads the file, checks
// each number, groups the rows, keeps one row per (group, number), cuts batches of 200 and stores
// all of it in smsdrop's journal schema with smsdrop's own row inserter, committing 5,000 rows
// first and doubling up to 50,000, as intake does. After each commit it posts the batches that
// commit closed to the sending thread. Only what every design that journals before sending must do:
// none of smsdrop's finer checks, encodings, repeats or crash bookkeeping.
import { createReadStream } from 'node:fs';
import { threadCpuSeconds } from './processes.js';
import { randomUUID } from 'node:crypto';
import { parentPort, workerData } from 'node:worker_threads';
import { parse } from 'csv-parse';
import { ROWS_PER_COMMIT } from '../src/journal/bulk.js';
import { openJournal } from '../src/journal/open.js';
import { createRowInserter } from '../src/journal/rowInserter.js';
import { MAX_PER_REQUEST } from './generate.js';
import { SLOT_BITS, slotOf } from './twoThreadsSlots.js';

export interface IntakeThreadInput {
  csv: string;
  journalFile: string;
  appId: string;
}

/** A batch closed and committed: what the sending thread needs to send it. */
export interface ClosedBatch {
  id: number;
  reqId: string;
  templateId: string;
  datas: string[];
  phones: string;
}

export type IntakeMessage = { batches: ClosedBatch[] } | { done: true; rows: number; fileId: number; cpuSeconds: number };

interface Group {
  id: number;
  templateId: string;
  datas: string[];
  slot: number;
  open: { id: number; reqId: string; phones: string[] } | undefined;
}

const MOBILE = /^1[3-9]\d{9}$/;

/**
 * The (group, number) pairs placed, exact, in an open-addressing table of two typed arrays (the
 * group, and the number as a double: 0 is an empty slot): no object per number, so neither the
 * memory nor the collector pays per row.
 */
class PlacedNumbers {
  #groups = new Uint32Array(1 << 16);
  #phones = new Float64Array(1 << 16);
  #count = 0;

  /** Adds the pair; false if it was there already. */
  add(group: number, phone: number): boolean {
    if (this.#count * 2 >= this.#phones.length) this.#grow();
    const mask = this.#phones.length - 1;
    for (let i = (Math.imul(group, 0x9e3779b1) ^ (phone % 0x7fffffff)) & mask; ; i = (i + 1) & mask) {
      if (this.#phones[i] === 0) {
        this.#groups[i] = group;
        this.#phones[i] = phone;
        this.#count++;
        return true;
      }
      if (this.#phones[i] === phone && this.#groups[i] === group) return false;
    }
  }

  #grow(): void {
    const [groups, phones] = [this.#groups, this.#phones];
    this.#groups = new Uint32Array(groups.length * 2);
    this.#phones = new Float64Array(phones.length * 2);
    this.#count = 0;
    for (let i = 0; i < phones.length; i++) if (phones[i] !== 0) this.add(groups[i]!, phones[i]!);
  }
}

const FIRST_COMMIT = 5_000;

const { csv, journalFile, appId } = workerData as IntakeThreadInput;
const port = parentPort!;
const db = openJournal(journalFile);
const now = new Date().toISOString();
const fileId = Number(
  db.prepare("INSERT INTO files (sha256, name, size, encoding, status, created_at) VALUES ('two-threads', 'bench.csv', 0, 'utf-8', 'intake', ?)").run(now).lastInsertRowid,
);
const rowsOut = createRowInserter(db, fileId);
const insertGroup = db.prepare('INSERT INTO groups (id, file_id, key_hash, app_id, template_id, datas) VALUES (?, ?, 0, ?, ?, ?)');
const insertBatch = db.prepare("INSERT INTO batches (id, file_id, group_id, req_id, numbers, state, created_at, updated_at) VALUES (?, ?, ?, ?, ?, 'planned', ?, ?)");
const insertNumbers = db.prepare('INSERT INTO batch_numbers (batch_id, phones) VALUES (?, ?)');

const groups = new Map<string, Group>();
const placed = new PlacedNumbers();
/** Rows per group slot in the file (twoThreadsSlots.ts), once the main thread's count is in. */
let slotRows: Uint32Array | undefined;
/** Rows per group slot read so far, and the groups of each slot. */
const slotRead = new Uint32Array(1 << SLOT_BITS);
const slotGroups = new Map<number, Group[]>();
let closed: Array<ClosedBatch & { groupId: number; numbers: number }> = [];
let batchIds = 0;

port.on('message', (counts: Uint32Array) => {
  slotRows = counts;
  for (const slot of slotGroups.keys()) closeIfRead(slot);
});

/** Closes the open batches of a slot's groups once all of the slot's rows are read. */
function closeIfRead(slot: number): void {
  if (slotRows && slotRead[slot] === slotRows[slot]) for (const group of slotGroups.get(slot)!) closeBatch(group);
}

/** Template values, without the empty cells a template with fewer values leaves at the end. */
function valuesOf(cells: string[]): string[] {
  let end = cells.length;
  while (end > 2 && cells[end - 1] === '') end--;
  return cells.slice(2, end);
}

function groupOf(key: string, cells: string[]): Group {
  let group = groups.get(key);
  if (group) return group;
  group = { id: groups.size + 1, templateId: cells[1] ?? '', datas: valuesOf(cells), slot: slotOf(key, 0, key.length), open: undefined };
  groups.set(key, group);
  const inSlot = slotGroups.get(group.slot);
  if (inSlot) inSlot.push(group);
  else slotGroups.set(group.slot, [group]);
  insertGroup.run(group.id, fileId, appId, group.templateId, JSON.stringify(group.datas));
  return group;
}

function closeBatch(group: Group): void {
  const open = group.open;
  if (!open) return;
  group.open = undefined;
  closed.push({ id: open.id, reqId: open.reqId, templateId: group.templateId, datas: group.datas, phones: open.phones.join(','), groupId: group.id, numbers: open.phones.length });
}

function placeRow(line: number, cells: string[]): void {
  const raw = cells[0] ?? '';
  const phone = raw.includes(' ') ? raw.replaceAll(' ', '') : raw;
  const group = groupOf(cells.length > 1 ? cells.slice(1).join(',') : '', cells);
  slotRead[group.slot]!++;
  if (!MOBILE.test(phone)) rowsOut.add([line, raw, null, group.id, 'invalid', 'not a mobile number', null, null, null]);
  else if (!placed.add(group.id, Number(phone))) rowsOut.add([line, raw, phone, group.id, 'duplicate', null, null, null, null]);
  else {
    group.open ??= { id: ++batchIds, reqId: randomUUID().replaceAll('-', ''), phones: [] };
    group.open.phones.push(phone);
    rowsOut.add([line, raw, phone, group.id, 'valid', null, null, group.open.id, null]);
    if (group.open.phones.length === MAX_PER_REQUEST) closeBatch(group);
  }
  closeIfRead(group.slot);
}

/** Stores the closed batches, commits, and hands them to the sending thread. */
function commit(): void {
  rowsOut.flush();
  for (const b of closed) {
    insertBatch.run(b.id, fileId, b.groupId, b.reqId, b.numbers, now, now);
    insertNumbers.run(b.id, b.phones);
  }
  db.exec('COMMIT');
  if (closed.length > 0) port.postMessage({ batches: closed.map(({ id, reqId, templateId, datas, phones }) => ({ id, reqId, templateId, datas, phones })) } satisfies IntakeMessage);
  closed = [];
}

let line = 0;
let inTransaction = 0;
let commitSize = FIRST_COMMIT;
db.exec('BEGIN');
for await (const cells of createReadStream(csv, { highWaterMark: 256 * 1024 }).pipe(parse({ bom: true })) as AsyncIterable<string[]>) {
  if (++line === 1) continue; // header
  placeRow(line, cells);
  if (++inTransaction === commitSize) {
    commit();
    db.exec('BEGIN');
    inTransaction = 0;
    commitSize = Math.min(commitSize * 2, ROWS_PER_COMMIT);
  }
}
for (const group of groups.values()) closeBatch(group);
commit();
db.close();
port.postMessage({ done: true, rows: line - 1, fileId, cpuSeconds: threadCpuSeconds() } satisfies IntakeMessage);
