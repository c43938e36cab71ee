// The rows of the files people read after a run (NAME.result.csv, NAME.rejected.csv), read from
// the journal. The journal hands over text and rows; results/ writes the files.
import { SQLITE_DIALECT } from './rules.js';
import { phoneRawOf } from './storedForms.js';
import type { Statement } from 'better-sqlite3';
import { connectionOf, insideOf } from './connection.js';
import type { Journal } from './connection.js';
import { fileRowSpan } from './rowSpan.js';
import { SENT_BY_ANOTHER_FILE } from '../ports/results.js';
import { OUTCOME_STATES, rowStatusOfBatch, UNSETTLED_STATES } from '../ports/states.js';
import type {
  RejectedHeader,
  RejectedRow,
  ResultCursor,
  ResultFormat,
  ResultTuple,
} from '../ports/results.js';
import { batchCode } from '../journalRules/statusCodes.js';

// 1,000 lines make a string of about 100 KB: below V8's large-object size, so each page is
// young garbage, collected at once (larger pages outlive collections and raise the peak memory).
const PAGE_ROWS = 1000;
/** Batch states that no longer change in a run: their rows' result lines are final. */
const FINAL_STATES = new Set<string>(OUTCOME_STATES);
const UNSETTLED = new Set<string>(UNSETTLED_STATES);
const MARKER = '\x01';

/** A batch as its tail is made from: TAIL_COLUMNS, in this order. */
type BatchTail = [
  id: number,
  state: string,
  code: string,
  msg: string,
  sid: string,
  created: string,
];
const TAIL_COLUMNS = `id, state, ifnull(${batchCode('batches')}, ''), ifnull(status_msg, ''),
  ifnull(${SQLITE_DIALECT.sidText('sms_message_sid')}, ''), ifnull(${SQLITE_DIALECT.stampText('date_created')}, '')`;

/**
 * What a file's batches look like: a batch added (split, retried), an outcome recorded or a state
 * changed after this changes it. (Within this process nothing writes to a finished file's batches
 * before its result file is written; the stamp is a guard, not a lock.)
 */
export function resultsStamp(db: Journal, fileId: number): string {
  const stamp = connectionOf(db)
    .prepare(
      `SELECT count(*), max(id), ${SQLITE_DIALECT.timeText('max(updated_at)')}, total(unicode(state) * id)
       FROM batches WHERE file_id = ?`,
    )
    .raw(true)
    .get(fileId);
  return JSON.stringify(stamp);
}

/** The statements of one file's result pages, around the temporary table of its batches' tails. */
function pageStatements(db: Journal, tails: string) {
  const connection = connectionOf(db);
  return {
    page: connection.prepare(resultPageSql(tails)).pluck(),
    untailed: connection
      .prepare(
        `SELECT DISTINCT batch_id FROM rows WHERE id BETWEEN ? AND ? AND +file_id = ? AND batch_id IS NOT NULL AND batch_id NOT IN (SELECT batch_id FROM temp.${tails})`,
      )
      .pluck(),
    batchById: connection.prepare(`SELECT ${TAIL_COLUMNS} FROM batches WHERE id = ?`).raw(true),
    insertTail: connection.prepare(`INSERT INTO temp.${tails} (batch_id, tail) VALUES (?, ?)`),
    batchState: connection.prepare('SELECT state FROM batches WHERE id = ?').pluck(),
    oddRow: connection
      .prepare(
        "SELECT CAST(line AS TEXT), phone_raw, ifnull(phone, ''), status, ifnull(status_code, ''), ifnull(status_msg, ''), ifnull(sms_message_sid, ''), ifnull(date_created, '') FROM row_results WHERE id = ?",
      )
      .raw(true),
  };
}

/**
 * The result lines, in row order, a page of rows at a time. A million rows turned into a million
 * JS arrays of strings cost seconds (better-sqlite3 makes a JS value per column), so SQLite writes
 * the lines itself wherever that is exactly what `format` would write: a valid row whose phone
 * cells are plain digits (nothing to quote or guard) followed by its batch's "tail" (the status
 * cells, made once per batch by `format`, kept in a temporary table). Every other row comes back as
 * a marker, \x01 and its id, and is written by `format`. No marker can be mistaken: digits and
 * tails without \x01 are all a safe line holds.
 *
 * Pages go in order, so a page can be handed over early (finalPages) only when every row of it is
 * final: invalid, duplicate, or in a batch with a final outcome. Such a row's line cannot change
 * any more in this run (a batch splits, moving its rows, only from `sending`).
 */
export function resultPages(db: Journal, fileId: number, format: ResultFormat): ResultCursor {
  const tails = insideOf(db).temporaryTableName(`result_tails_${fileId}`);
  connectionOf(db).exec(
    `CREATE TEMP TABLE ${tails} (batch_id INTEGER PRIMARY KEY, tail TEXT NOT NULL)`,
  );
  const q = pageStatements(db, tails);
  const oddRow = (id: number) => format.oddRow(q.oddRow.get(id) as ResultTuple);
  const addTail = (b: BatchTail): void => {
    const tail = format.tail([rowStatusOfBatch(b[1]), b[2], b[3], b[4], b[5]]);
    if (!tail.includes(MARKER)) q.insertTail.run(b[0], tail); // else its rows go through oddRow
  };
  // A file's rows are written together, so its span of row ids holds few others (filtered out).
  // Its rows are all in before sending starts; a split only moves rows between batches.
  const span = fileRowSpan(db, fileId);
  let next = span?.first ?? 1;
  const last = span?.last ?? 0;
  const pageEnd = (): number => Math.min(next + PAGE_ROWS - 1, last);
  const takePage = (): string => {
    const text = q.page.get(next, pageEnd(), fileId) as string | null;
    next += PAGE_ROWS;
    return text === null ? '' : `${replaceMarkers(text, oddRow)}\r\n`;
  };
  const nextPageFinal = finalityOf(q, fileId, addTail, () => [next, pageEnd()]);
  return {
    finalPages(deadline) {
      const pages: string[] = [];
      if (!nextPageFinal.stillWaiting())
        while (next <= last && nextPageFinal.tailed()) {
          pages.push(takePage());
          if (performance.now() >= deadline) break;
        }
      return pages;
    },
    *restPages() {
      // One pass over the batches without a tail, not one query per page (1M rows at latency 0,
      // most pages left: ~0.2 s). Tails made before are of final batches, still right.
      fillTails(db, fileId, tails, addTail);
      while (next <= last) yield [takePage()];
    },
    close() {
      connectionOf(db).exec(`DROP TABLE temp.${tails}`);
    },
  };
}

/** Whether the next page's rows are all final; and the making of its batches' tails once so. */
function finalityOf(
  q: ReturnType<typeof pageStatements>,
  fileId: number,
  addTail: (batch: BatchTail) => void,
  range: () => [number, number],
) {
  /** The batches of the next page that had no final outcome at the last look. */
  let waitingFor: number[] = [];
  return {
    // Looking again at the batches the next page waits for costs far less than at the page. Those
    // still planned or being sent: once split, a batch's rows are in other batches, which the next
    // look at the page finds. A look stops at the first such batch (it is made every few ms while
    // answers come in, and a page of personalised rows waits for hundreds): the ones before it are
    // not looked at again, and tailed() reads them all once none is left.
    stillWaiting(): boolean {
      const at = waitingFor.findIndex((id) => UNSETTLED.has(q.batchState.get(id) as string));
      waitingFor = at < 0 ? [] : waitingFor.slice(at);
      return waitingFor.length > 0;
    },
    /** Makes the tails of the next page's batches; false (and none made) if some are not final. */
    tailed(): boolean {
      const batches = (q.untailed.all(...range(), fileId) as number[]).map(
        (id) => q.batchById.get(id) as BatchTail,
      );
      waitingFor = batches.filter(([, state]) => !FINAL_STATES.has(state)).map(([id]) => id);
      if (waitingFor.length > 0) return false;
      for (const batch of batches) addTail(batch);
      return true;
    },
  };
}

/**
 * The tails of the file's batches that have none yet, in pages of batches (faster than page by page
 * of rows).
 */
function fillTails(
  db: Journal,
  fileId: number,
  tails: string,
  addTail: (batch: BatchTail) => void,
): void {
  // Read a page, then write it: a connection cannot write while a read is under way.
  const page: Statement = connectionOf(db)
    .prepare(
      `SELECT ${TAIL_COLUMNS} FROM batches WHERE file_id = ? AND id > ? AND id NOT IN (SELECT batch_id FROM temp.${tails}) ORDER BY id LIMIT ?`,
    )
    .raw(true);
  const writePage = insideOf(db).transaction((batches: BatchTail[]) => {
    for (const batch of batches) addTail(batch);
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
  // cell equal to it is too, and only a raw cell written otherwise (spaces, +86: a few rows in a
  // hundred) needs the pattern match; the comparison first is the cheaper of the three ways
  // (docs/benchmark-history.md, "what this run's own CPU allows").
  // And neither is digits Excel would change (the format writes those as ="digits": a leading 0,
  // or 12 digits or more).
  const keptByExcel = (cell: string) => `(${cell} NOT GLOB '0?*' AND length(${cell}) < 12)`;
  // A raw cell kept as '' is the number itself (storedForms.ts, phoneRawOf).
  const plainPhones = `(${keptByExcel('r.phone')} AND (r.phone_raw = '' OR r.phone_raw = r.phone OR (r.phone_raw NOT GLOB '*[^0-9]*' AND ${keptByExcel('r.phone_raw')})))`;
  const raw = phoneRawOf('r');
  const plain = `r.intake = 'valid' AND t.tail IS NOT NULL AND ${plainPhones}`;
  // A duplicate's line (a list given again is all duplicates: one look-up each in JS cost 8 s a
  // million), its message as row_results words it (migration 7), here without the view's batch
  // look-up. NULL, so the marker, when the earlier file's name needs quoting or holds the marker,
  // or the earlier row is gone. The messages themselves need no quoting (migrations.ts).
  const duplicateLine = `CASE WHEN r.intake = 'duplicate' AND ${plainPhones} THEN r.line || ',' || ${raw} || ',' || r.phone || ',duplicate,,' || (
      SELECT CASE WHEN o.file_id = r.file_id THEN 'duplicate of line ' || o.line
        WHEN f.name NOT GLOB '*[,"' || char(1, 10, 13) || ']*'
        THEN '${SENT_BY_ANOTHER_FILE}: line ' || o.line || ' of ' || f.name || ' (file ' || o.file_id || ')' END
      FROM rows o JOIN files f ON f.id = o.file_id WHERE o.id = r.duplicate_of) || ',,' END`;
  return `SELECT group_concat(
            CASE WHEN ${plain} THEN r.line || ',' || ${raw} || ',' || r.phone || ',' || t.tail ELSE coalesce(${duplicateLine}, char(1) || r.id) END,
            char(13, 10))
          FROM rows r LEFT JOIN temp.${tails} t ON t.batch_id = r.batch_id
          WHERE r.id BETWEEN ? AND ? AND +r.file_id = ?`;
}

/** The page text with each marker (\x01 and a row id, up to the CR) replaced by that row's line. */
export function replaceMarkers(text: string, oddRow: (id: number) => string): string {
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

export function rejectedHeader(db: Journal, fileId: number): RejectedHeader | undefined {
  const file = connectionOf(db)
    .prepare('SELECT invalid, header FROM files WHERE id = ?')
    .get(fileId) as { invalid: number; header: string | null } | undefined;
  if (!file) return undefined;
  const parsed = file.header
    ? (JSON.parse(file.header) as { columns?: string[]; extras?: string[] })
    : {};
  return { invalid: file.invalid, columns: parsed.columns, extras: parsed.extras ?? [] };
}

/**
 * The file's invalid rows in row order, a page at a time. Each page is read whole: between pages
 * the connection is free for other work (a statement left open across them would keep it busy).
 */
export function* rejectedRows(db: Journal, fileId: number): Generator<RejectedRow[]> {
  // Left to itself SQLite walks every row of the file in id order (no sort needed); the index of
  // invalid rows and a sort of those few is about ten times quicker.
  const ids = connectionOf(db)
    .prepare(
      "SELECT id FROM rows INDEXED BY rows_invalid WHERE file_id = ? AND intake = 'invalid' ORDER BY id",
    )
    .pluck()
    .all(fileId) as number[];
  const page = connectionOf(db).prepare(
    `SELECT r.line, r.error, ${phoneRawOf('r')} AS phone_raw, ${SQLITE_DIALECT.appOf('g')} AS app_id, g.template_id, g.datas, r.extras, c.cells
     FROM rows r LEFT JOIN groups g ON g.id = r.group_id LEFT JOIN invalid_cells c ON c.row_id = r.id
     WHERE r.id IN (SELECT value FROM json_each(?)) ORDER BY r.id`,
  );
  for (let at = 0; at < ids.length; at += PAGE_ROWS)
    yield page.all(JSON.stringify(ids.slice(at, at + PAGE_ROWS))) as RejectedRow[];
}
