// The files people read after a run: NAME.result.csv (one line per input row, with its final
// status) and NAME.rejected.csv (the rows that were invalid, with the reason, in columns the
// intake accepts, so they can be fixed and dropped back). Both are Excel-safe (see csvio).
import { copyFileSync, mkdirSync, readdirSync, renameSync, rmSync } from 'node:fs';
import path from 'node:path';
import type { Statement } from 'better-sqlite3';
import { type CsvWriter, createCsvWriter, csvLine } from '../csvio/index.js';
import type { Journal } from './open.js';
import { SENT_BY_ANOTHER_FILE } from './migrations.js';
import { OUTCOME_STATES, UNSETTLED_STATES } from './states.js';
import { beyondHeaderName, type ColumnMap, mapHeader } from '../intake/headers.js';

export const RESULT_HEADER = [
  'line',
  'phone',
  'normalised_phone',
  'status',
  'status_code',
  'message',
  'sms_message_sid',
  'date_created',
];

/**
 * Writes NAME.result.csv into outDir; returns its path. When the run that just finished the file
 * wrote its lines ahead (see spoolResults), that file is moved into place instead.
 */
export async function writeResultCsv(
  db: Journal,
  fileId: number,
  outDir: string,
  baseName: string,
): Promise<string> {
  const file = path.join(outDir, `${baseName}.result.csv`);
  const spooled = takeSpooled(db, fileId);
  if (spooled !== undefined && moveInto(spooled, file)) return file;
  const writer = createCsvWriter(file, RESULT_HEADER);
  const pages = resultPages(db, fileId, writer);
  try {
    pages.writeRest();
  } finally {
    pages.close();
    await writer.close();
  }
  return file;
}

/**
 * A result file written while its rows are still being sent: each advance() writes the next
 * pages whose rows are all final, so that when the last answer is in only the last pages are
 * left (a million rows take ~2 s to write, which came after the last request). The lines are
 * those writeResultCsv would write at the end: a page goes out only once none of its lines can
 * change.
 */
export interface ResultSpool {
  /**
   * Writes a few more pages, if their rows are final (a few ms at most): call it now and then while
   * sending.
   */
  advance: () => void;
  /**
   * Sending finished: writes the rest, and keeps the file for the next writeResultCsv of this file.
   */
  complete(): Promise<void>;
  /** Sending did not finish (paused, stopped, failed): the file is dropped. */
  discard(): Promise<void>;
}

/**
 * Time one advance() may take: pages (~1.5 ms each) are written until it is spent. An answer that
 * arrives meanwhile waits for it, so it is kept short and advance() is called often instead.
 */
const ADVANCE_MS = 2;

/**
 * What a file's batches look like: a batch added (split, retried), an outcome recorded or a state
 * changed after this changes it. (Within this process nothing writes to a finished file's batches
 * before its result file is written; the stamp is a guard, not a lock.)
 */
function batchesStamp(db: Journal, fileId: number): string {
  const stamp = db
    .prepare(
      'SELECT count(*), max(id), max(updated_at), total(unicode(state) * id) FROM batches WHERE file_id = ?',
    )
    .raw(true)
    .get(fileId);
  return JSON.stringify(stamp);
}

/**
 * Removes spool files a crash or a failed filing left behind (they are written again when needed).
 */
function removeLeftovers(db: Journal, dir: string): void {
  for (const name of readdirSync(dir)) {
    const file = path.join(dir, name);
    if (name.endsWith('.csv.part') && !db.spools.inUse.has(file)) rmSync(file, { force: true });
  }
}

/**
 * Starts writing the result file of `fileId` ahead, into spool/ next to the journal. Any error
 * (in starting it or in writing a page) drops the spool: writeResultCsv then writes the file from
 * the journal, as without one, and reports what goes wrong then.
 */
export function spoolResults(db: Journal, fileId: number): ResultSpool {
  const key = fileId;
  const dropped = db.spools.completed.get(key);
  if (dropped) db.spools.inUse.delete(dropped.file);
  db.spools.completed.delete(key);
  const dir = path.join(path.dirname(db.name), 'spool');
  mkdirSync(dir, { recursive: true });
  removeLeftovers(db, dir);
  const file = path.join(dir, `result-${fileId}.csv.part`);
  db.spools.inUse.add(file);
  const writer = createCsvWriter(file, RESULT_HEADER);
  let pages: ResultPages;
  try {
    pages = resultPages(db, fileId, writer);
  } catch (err) {
    void writer.close().catch(() => {});
    rmSync(file, { force: true });
    db.spools.inUse.delete(file);
    throw err;
  }
  let open = true;
  const close = async (): Promise<void> => {
    if (!open) return;
    open = false;
    try {
      pages.close();
    } finally {
      await writer.close();
    }
  };
  const discard = async (): Promise<void> => {
    await close().catch(() => {});
    rmSync(file, { force: true });
    db.spools.inUse.delete(file);
  };
  return {
    advance: () => {
      if (!open) return;
      try {
        pages.writeFinal(performance.now() + ADVANCE_MS);
      } catch {
        void discard(); // a full disk, say (it runs from a timer: nothing may escape)
      }
    },
    complete: async () => {
      if (!open) return;
      try {
        pages.writeRest();
        const batches = batchesStamp(db, fileId); // as they were when the last page was written
        await close();
        db.spools.completed.set(key, { file, batches });
      } catch {
        await discard();
      }
    },
    discard,
  };
}

/** The completed spool of the file, if its batches have not changed since (else it is dropped). */
function takeSpooled(db: Journal, fileId: number): string | undefined {
  const key = fileId;
  const spool = db.spools.completed.get(key);
  if (!spool) return undefined;
  db.spools.completed.delete(key);
  db.spools.inUse.delete(spool.file);
  if (spool.batches === batchesStamp(db, fileId)) return spool.file;
  rmSync(spool.file, { force: true });
  return undefined;
}

/** Moves a spooled file into place (copies it across file systems); false if that failed. */
function moveInto(from: string, to: string): boolean {
  try {
    try {
      renameSync(from, to);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EXDEV') throw err;
      copyFileSync(from, to);
    }
    return true;
  } catch {
    return false; // written again from the journal, where a real problem shows itself
  } finally {
    rmSync(from, { force: true });
  }
}

// 1,000 lines make a string of about 100 KB: below V8's large-object size, so each page is
// young garbage, collected at once (5,000 a page raised the peak RSS of a 1M-row run by 20 MB).
const PAGE_ROWS = 1000;
/** Batch states that no longer change in a run: their rows' result lines are final. */
const FINAL_STATES = new Set<string>(OUTCOME_STATES);
const UNSETTLED = new Set<string>(UNSETTLED_STATES);

interface ResultPages {
  /**
   * Writes the next pages whose rows are all final until `deadline` (a performance.now() time)
   * passes.
   */
  writeFinal(deadline: number): void;
  /** Writes every page not written yet, final or not (pending rows say pending). */
  writeRest(): void;
  close(): void;
}

/**
 * The result lines, in row order, a page of rows at a time. A million rows turned into a million
 * JS arrays of strings cost seconds (better-sqlite3 makes a JS value per column), so SQLite writes
 * the lines itself wherever that is exactly what csvLine would write: a valid row whose phone
 * cells are plain digits (nothing to quote or guard) followed by its batch's "tail" (the status
 * cells, made once per batch by csvLine, kept in a temporary table). Every other row comes back as
 * a marker, \x01 and its id, and is written by csvLine. No marker can be mistaken: digits and
 * tails without \x01 are all a safe line holds.
 *
 * Pages go in order, so a page can be written early (writeFinal) only when every row of it is
 * final: invalid, duplicate, or in a batch with a final outcome. Such a row's line cannot change
 * any more in this run (a batch splits, moving its rows, only from `sending`).
 */
function resultPages(db: Journal, fileId: number, writer: CsvWriter): ResultPages {
  const tails = db.temporaryTableName(`result_tails_${fileId}`);
  db.exec(`CREATE TEMP TABLE ${tails} (batch_id INTEGER PRIMARY KEY, tail TEXT NOT NULL)`);
  const page = db.prepare(resultPageSql(tails)).pluck();
  const untailed = db
    .prepare(
      `SELECT DISTINCT batch_id FROM rows WHERE id BETWEEN ? AND ? AND +file_id = ? AND batch_id IS NOT NULL AND batch_id NOT IN (SELECT batch_id FROM temp.${tails})`,
    )
    .pluck();
  const batchById = db.prepare(`SELECT ${TAIL_COLUMNS} FROM batches WHERE id = ?`).raw(true);
  const insertTail = db.prepare(`INSERT INTO temp.${tails} (batch_id, tail) VALUES (?, ?)`);
  const batchState = db.prepare('SELECT state FROM batches WHERE id = ?').pluck();
  const oddRow = oddRowWriter(db);
  // A file's rows are written together, so its span of row ids holds few others (filtered out).
  // Its rows are all in before sending starts; a split only moves rows between batches.
  const span = db
    .prepare('SELECT min(id) AS lo, max(id) AS hi FROM rows WHERE file_id = ?')
    .get(fileId) as { lo: number | null; hi: number | null };
  let next = span.lo ?? 1;
  const last = span.hi ?? 0;

  const pageEnd = (): number => Math.min(next + PAGE_ROWS - 1, last);
  const writePage = (): void => {
    const text = page.get(next, pageEnd(), fileId) as string | null;
    if (text !== null) writer.writeText(`${replaceMarkers(text, oddRow)}\r\n`);
    next += PAGE_ROWS;
  };
  /** The batches of the next page that had no final outcome at the last look. */
  let waitingFor: number[] = [];
  // Those still planned or being sent. Once split, a batch's rows are in other batches, which the
  // next look at the page finds.
  const stillWaiting = (): boolean => {
    waitingFor = waitingFor.filter((id) => UNSETTLED.has(batchState.get(id) as string));
    return waitingFor.length > 0;
  };
  /**
   * Makes the tails of the next page's batches; false (and none made) if some have no final outcome
   * yet.
   */
  const tailNextPage = (): boolean => {
    const batches = (untailed.all(next, pageEnd(), fileId) as number[]).map(
      (id) => batchById.get(id) as BatchTail,
    );
    waitingFor = batches.filter(([, state]) => !FINAL_STATES.has(state)).map(([id]) => id);
    if (waitingFor.length > 0) return false;
    for (const batch of batches) addTail(insertTail, batch);
    return true;
  };
  return {
    writeFinal(deadline) {
      // Looking again at the batches the next page waits for costs far less than at the page.
      if (stillWaiting()) return;
      while (next <= last && tailNextPage()) {
        writePage();
        if (performance.now() >= deadline) return;
      }
    },
    writeRest() {
      // One pass over the batches without a tail, not one query per page (1M rows at latency 0,
      // most pages left: ~0.2 s). Tails made before are of final batches, still right.
      fillTails(db, fileId, tails, insertTail);
      while (next <= last) writePage();
    },
    close() {
      db.exec(`DROP TABLE temp.${tails}`);
    },
  };
}

const MARKER = '\x01';
/**
 * Digits Excel would change (the status code 000000, a date 20260101120000, a number 0044…) are
 * written as ="digits", as export writes them (csvio's guardDigits): Excel shows them as they are.
 */
const DIGITS_AS_TEXT = true;

/** A batch as its tail is made from: TAIL_COLUMNS, in this order. */
type BatchTail = [
  id: number,
  state: string,
  code: string | null,
  msg: string | null,
  sid: string | null,
  created: string | null,
];
const TAIL_COLUMNS = 'id, state, status_code, status_msg, sms_message_sid, date_created';

/**
 * A batch's status cells as csvLine writes them (no CRLF); none when they hold the marker (its rows
 * go through csvLine).
 */
function addTail(insert: Statement, [id, state, code, msg, sid, created]: BatchTail): void {
  const cells = [rowStatusOf(state), code ?? '', msg ?? '', sid ?? '', created ?? ''];
  const tail = csvLine(cells, DIGITS_AS_TEXT).slice(0, -2);
  if (!tail.includes(MARKER)) insert.run(id, tail);
}

/**
 * The tails of the file's batches that have none yet, in pages of batches (faster than page by page
 * of rows).
 */
function fillTails(db: Journal, fileId: number, tails: string, insert: Statement): void {
  // Read a page, then write it: a connection cannot write while a read is under way.
  const page = db
    .prepare(
      `SELECT ${TAIL_COLUMNS} FROM batches WHERE file_id = ? AND id > ? AND id NOT IN (SELECT batch_id FROM temp.${tails}) ORDER BY id LIMIT ?`,
    )
    .raw(true);
  const writePage = db.transaction((batches: BatchTail[]) => {
    for (const batch of batches) addTail(insert, batch);
  });
  for (let after = 0; ;) {
    const batches = page.all(fileId, after, PAGE_ROWS) as BatchTail[];
    if (batches.length === 0) return;
    writePage(batches);
    after = batches[batches.length - 1]![0];
  }
}

/**
 * One page of result text. The LEFT JOIN keeps rows the outer loop and the id range makes it a
 * rowid-order scan, so group_concat sees the rows in id order (an ORDER BY inside group_concat
 * would sort what is already sorted, a third of the time); test/pipeline checks the plan.
 */
export function resultPageSql(tails: string): string {
  // Both phone cells digits only. A valid row's number is digits only (normalisePhone), so a raw
  // cell equal to it is too, and only a raw cell written otherwise (spaces, +86: ~1% of the
  // bench's rows) needs the pattern match (one match of both cells: 1M rows, 590 ms a pass over
  // every page; the comparison first: 375 ms; two matches cost a third more).
  // And neither is digits Excel would change (guardDigits: a leading 0, or 12 digits or more).
  const keptByExcel = (cell: string) => `(${cell} NOT GLOB '0?*' AND length(${cell}) < 12)`;
  const plainPhones = `(${keptByExcel('r.phone')} AND (r.phone_raw = r.phone OR (r.phone_raw NOT GLOB '*[^0-9]*' AND ${keptByExcel('r.phone_raw')})))`;
  const plain = `r.intake = 'valid' AND t.tail IS NOT NULL AND ${plainPhones}`;
  // A duplicate's line (a list given again is all duplicates: one look-up each in JS cost 8 s a
  // million), its message as row_results words it (migration 7), here without the view's batch
  // look-up. NULL, so the marker, when the earlier file's name needs quoting or holds the marker,
  // or the earlier row is gone. The messages themselves need no quoting (migrations.ts).
  const duplicateLine = `CASE WHEN r.intake = 'duplicate' AND ${plainPhones} THEN r.line || ',' || r.phone_raw || ',' || r.phone || ',duplicate,,' || (
      SELECT CASE WHEN o.file_id = r.file_id THEN 'duplicate of line ' || o.line
        WHEN f.name NOT GLOB '*[,"' || char(1, 10, 13) || ']*'
        THEN '${SENT_BY_ANOTHER_FILE}: line ' || o.line || ' of ' || f.name || ' (file ' || o.file_id || ')' END
      FROM rows o JOIN files f ON f.id = o.file_id WHERE o.id = r.duplicate_of) || ',,' END`;
  return `SELECT group_concat(
            CASE WHEN ${plain} THEN r.line || ',' || r.phone_raw || ',' || r.phone || ',' || t.tail ELSE coalesce(${duplicateLine}, char(1) || r.id) END,
            char(13, 10))
          FROM rows r LEFT JOIN temp.${tails} t ON t.batch_id = r.batch_id
          WHERE r.id BETWEEN ? AND ? AND +r.file_id = ?`;
}

function replaceMarkers(text: string, oddRow: (id: number) => string): string {
  let at = text.indexOf(MARKER);
  if (at === -1) return text;
  let out = '';
  let from = 0;
  while (at !== -1) {
    let end = text.indexOf('\r', at);
    if (end === -1) end = text.length;
    out += text.slice(from, at) + oddRow(Number(text.slice(at + 1, end)));
    from = end;
    at = text.indexOf(MARKER, from);
  }
  return out + text.slice(from);
}

/**
 * The result line (without CRLF) of a row SQLite did not write: invalid, duplicate, or with cells
 * to quote or guard.
 */
function oddRowWriter(db: Journal): (id: number) => string {
  const rowById = db
    .prepare(
      'SELECT line, phone_raw, phone, status, status_code, status_msg, sms_message_sid, date_created FROM row_results WHERE id = ?',
    )
    .raw(true);
  return (id) => {
    const [line, phoneRaw, phone, status, code, msg, sid, created] = rowById.get(id) as ResultTuple;
    return csvLine(
      [
        String(line),
        phoneRaw,
        phone ?? '',
        status,
        code ?? '',
        msg ?? '',
        sid ?? '',
        created ?? '',
      ],
      DIGITS_AS_TEXT,
    ).slice(0, -2);
  };
}

type ResultTuple = [
  number,
  string,
  string | null,
  string,
  string | null,
  string | null,
  string | null,
  string | null,
];

/**
 * A valid row's status is its batch's outcome; pending until the batch has one (as row_results).
 */
function rowStatusOf(batchState: string | null): string {
  return batchState === 'accepted' || batchState === 'failed' || batchState === 'unknown'
    ? batchState
    : 'pending';
}

interface RejectedRow {
  line: number;
  error: string;
  phone_raw: string;
  app_id: string | null;
  template_id: string | null;
  datas: string | null;
  extras: string | null;
  /** The row's cells as read (invalid_cells), when intake kept them. */
  cells: string | null;
}

/** A rejected row's cells, in the rejected file's columns (without line and reason). */
interface RejectedCells {
  phone: string;
  appId: string;
  templateId: string;
  datas: string[];
  extras: Record<string, string>;
  /** Cells past the header of the file it came from. */
  beyond: string[];
}

/** Writes NAME.rejected.csv when the file had invalid rows; returns its path, or undefined. */
export async function writeRejectedCsv(
  db: Journal,
  fileId: number,
  outDir: string,
  baseName: string,
): Promise<string | undefined> {
  const count = db.prepare('SELECT invalid FROM files WHERE id = ?').pluck().get(fileId) as number;
  if (count === 0) return undefined;
  // Left to itself SQLite walks every row of the file in id order (no sort needed); the index of
  // invalid rows and a sort of those few is ten times quicker (0.34 -> 0.03 s for 1M rows).
  const query = `SELECT r.line, r.error, r.phone_raw, g.app_id, g.template_id, g.datas, r.extras, c.cells
                 FROM rows r INDEXED BY rows_invalid LEFT JOIN groups g ON g.id = r.group_id LEFT JOIN invalid_cells c ON c.row_id = r.id
                 WHERE r.file_id = ? AND r.intake = 'invalid' ORDER BY r.id`;
  const cellsOf = rejectedCells(db, fileId);
  let maxData = 0;
  let maxBeyond = 0;
  for (const r of db.prepare(query).iterate(fileId) as IterableIterator<RejectedRow>) {
    const cells = cellsOf(r);
    maxData = Math.max(maxData, cells.datas.length);
    maxBeyond = Math.max(maxBeyond, cells.beyond.length);
  }
  const extraNames = extraColumnNames(db, fileId);
  const header = [
    'line',
    'reason',
    'phone',
    'appId',
    'templateId',
    ...Array.from({ length: maxData }, (_, i) => `data${i + 1}`),
    ...extraNames,
    ...Array.from({ length: maxBeyond }, (_, i) => beyondHeaderName(i + 1)),
  ];
  const file = path.join(outDir, `${baseName}.rejected.csv`);
  // to be fixed in Excel and dropped back
  const writer = createCsvWriter(file, header, { digitsAsText: true });
  for (const r of db.prepare(query).iterate(fileId) as IterableIterator<RejectedRow>) {
    const cells = cellsOf(r);
    writer.write([
      String(r.line),
      r.error,
      cells.phone,
      cells.appId,
      cells.templateId,
      ...Array.from({ length: maxData }, (_, i) => cells.datas[i] ?? ''),
      ...extraNames.map((n) => cells.extras[n] ?? ''),
      ...Array.from({ length: maxBeyond }, (_, i) => cells.beyond[i] ?? ''),
    ]);
  }
  await writer.close();
  return file;
}

/**
 * A rejected row's cells. From the journal's columns; or, when intake kept the row's cells, from
 * those, placed by the file's header: a row without a template id has no group to hold its
 * values, and the cells past the header have no column at all.
 */
function rejectedCells(db: Journal, fileId: number): (r: RejectedRow) => RejectedCells {
  const recorded = db.prepare('SELECT header FROM files WHERE id = ?').pluck().get(fileId) as
    string | null;
  const parsed = recorded
    ? (JSON.parse(recorded) as { columns?: string[]; extras?: string[] })
    : undefined;
  let map: ColumnMap | undefined;
  try {
    map = parsed?.columns ? mapHeader(parsed.columns) : undefined;
  } catch {
    // a header refused now (never: it was accepted when read): the columns as recorded
    map = undefined;
  }
  const extraNames = parsed?.extras ?? [];
  return (r) => {
    const fromColumns: RejectedCells = {
      phone: r.phone_raw,
      appId: r.app_id ?? '',
      templateId: r.template_id ?? '',
      datas: r.datas ? (JSON.parse(r.datas) as string[]) : [],
      extras: r.extras ? (JSON.parse(r.extras) as Record<string, string>) : {},
      beyond: [],
    };
    if (!r.cells || !map) return fromColumns;
    const cells = JSON.parse(r.cells) as string[];
    const at = (column: number | undefined, fallback: string): string =>
      column === undefined ? fallback : (cells[column] ?? '');
    const datas = map.datas.map((column) => cells[column] ?? '');
    while (datas.length > 0 && datas[datas.length - 1] === '') datas.pop();
    // A rejected file dropped back has such columns already: they stay first.
    const beyond = [
      ...map.beyond.map((column) => cells[column] ?? ''),
      ...cells.slice(map.header.length),
    ];
    while (beyond.length > 0 && beyond[beyond.length - 1]!.trim() === '') beyond.pop();
    return {
      phone: at(map.phone, r.phone_raw),
      // An id the row did not have came from the default (SMSDROP_APP_ID…): left empty, it is the
      // default again.
      appId: at(map.appId, r.app_id ?? ''),
      templateId: at(map.templateId, r.template_id ?? ''),
      datas,
      extras: Object.fromEntries(
        map.extras.map((column, i) => [
          extraNames[i] ?? `column ${column + 1}`,
          cells[column] ?? '',
        ]),
      ),
      beyond,
    };
  };
}

/** Names of the columns the file had besides phone, app, template and values. */
function extraColumnNames(db: Journal, fileId: number): string[] {
  const header = db.prepare('SELECT header FROM files WHERE id = ?').pluck().get(fileId) as
    string | null;
  if (!header) return [];
  const parsed = JSON.parse(header) as { extras?: string[] };
  return parsed.extras ?? [];
}
