// The files people read after a run: NAME.result.csv (one line per input row, with its final
// status) and NAME.rejected.csv (the rows that were invalid, with the reason, in columns the
// intake accepts, so they can be fixed and dropped back). Both are Excel-safe (see csvio).
import path from 'node:path';
import { type CsvWriter, createCsvWriter, csvLine } from '../csvio/index.js';
import type { Db } from '../journal/open.js';

export const RESULT_HEADER = ['line', 'phone', 'normalised_phone', 'status', 'status_code', 'message', 'sms_message_sid', 'date_created'];

/** Writes NAME.result.csv into outDir; returns its path. */
export async function writeResultCsv(db: Db, fileId: number, outDir: string, baseName: string): Promise<string> {
  const file = path.join(outDir, `${baseName}.result.csv`);
  const writer = createCsvWriter(file, RESULT_HEADER);
  try {
    writeResultLines(db, fileId, writer);
  } finally {
    await writer.close();
  }
  return file;
}

// 1,000 lines make a string of about 100 KB: below V8's large-object size, so each page is
// young garbage, collected at once (5,000 a page raised the peak RSS of a 1M-row run by 20 MB).
const PAGE_ROWS = 1000;

/**
 * The result lines, in row order. A million rows turned into a million JS arrays of strings
 * cost seconds (better-sqlite3 makes a JS value per column), so SQLite writes the lines itself,
 * a page of rows per query, wherever that is exactly what csvLine would write: a valid row whose
 * phone cells are plain digits (nothing to quote or guard) followed by its batch's "tail" (the
 * status cells, made once per batch by csvLine). Every other row comes back as a marker, \x01
 * and its id, and is written by csvLine. No marker can be mistaken: digits and tails without
 * \x01 are all a safe line holds.
 */
function writeResultLines(db: Db, fileId: number, writer: CsvWriter): void {
  const tails = `result_tails_${fileId}`;
  db.exec(`CREATE TEMP TABLE ${tails} (batch_id INTEGER PRIMARY KEY, tail TEXT NOT NULL)`);
  try {
    fillTails(db, fileId, tails);
    const page = db.prepare(resultPageSql(tails)).pluck();
    const oddRow = oddRowWriter(db);
    // A file's rows are written together, so its span of row ids holds few others (filtered out).
    const span = db.prepare('SELECT min(id) AS lo, max(id) AS hi FROM rows WHERE file_id = ?').get(fileId) as { lo: number | null; hi: number | null };
    if (span.lo === null || span.hi === null) return;
    for (let lo = span.lo; lo <= span.hi; lo += PAGE_ROWS) {
      const text = page.get(lo, Math.min(lo + PAGE_ROWS - 1, span.hi), fileId) as string | null;
      if (text !== null) writer.writeText(`${replaceMarkers(text, oddRow)}\r\n`);
    }
  } finally {
    db.exec(`DROP TABLE temp.${tails}`);
  }
}

const MARKER = '\x01';

/** Per batch of the file, its status cells as csvLine writes them (no CRLF). */
function fillTails(db: Db, fileId: number, table: string): void {
  const insert = db.prepare(`INSERT INTO temp.${table} (batch_id, tail) VALUES (?, ?)`);
  // Read a page, then write it: a connection cannot write while a read is under way.
  const page = db.prepare('SELECT id, state, status_code, status_msg, sms_message_sid, date_created FROM batches WHERE file_id = ? AND id > ? ORDER BY id LIMIT ?').raw(true);
  const writePage = db.transaction((batches: [number, string, ...(string | null)[]][]) => {
    for (const [id, state, code, msg, sid, created] of batches) {
      const tail = csvLine([rowStatusOf(state), code ?? '', msg ?? '', sid ?? '', created ?? '']).slice(0, -2);
      if (!tail.includes(MARKER)) insert.run(id, tail); // else its rows go through csvLine one by one
    }
  });
  for (let after = 0; ; ) {
    const batches = page.all(fileId, after, PAGE_ROWS) as [number, string, ...(string | null)[]][];
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
  // Both phone cells digits only, in one pattern match (two cost a third of the query; 1M rows: 1.2 -> 0.9 s).
  const plain = `r.intake = 'valid' AND t.tail IS NOT NULL AND (r.phone_raw || r.phone) NOT GLOB '*[^0-9]*'`;
  return `SELECT group_concat(
            CASE WHEN ${plain} THEN r.line || ',' || r.phone_raw || ',' || r.phone || ',' || t.tail ELSE char(1) || r.id END,
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

/** The result line (without CRLF) of a row SQLite did not write: invalid, duplicate, or with cells to quote or guard. */
function oddRowWriter(db: Db): (id: number) => string {
  const rowById = db
    .prepare(
      `SELECT r.line, r.phone_raw, r.phone, r.intake, r.error, r.duplicate_of,
              b.state, b.status_code, b.status_msg, b.sms_message_sid, b.date_created
       FROM rows r LEFT JOIN batches b ON b.id = r.batch_id WHERE r.id = ?`,
    )
    .raw(true);
  const lineOf = db.prepare('SELECT line FROM rows WHERE id = ?').pluck();
  return (id) => {
    const [line, phoneRaw, phone, intake, error, duplicateOf, state, code, msg, sid, created] = rowById.get(id) as ResultTuple;
    const cells = [String(line), phoneRaw, phone ?? ''];
    if (intake === 'invalid') cells.push('invalid', '', error ?? '', '', '');
    else if (intake === 'duplicate') cells.push('duplicate', '', `duplicate of line ${String(lineOf.get(duplicateOf))}`, '', '');
    else cells.push(rowStatusOf(state), code ?? '', msg ?? '', sid ?? '', created ?? '');
    return csvLine(cells).slice(0, -2);
  };
}

type ResultTuple = [number, string, string | null, string, string | null, number | null, string | null, string | null, string | null, string | null, string | null];

/** A valid row's status is its batch's outcome; pending until the batch has one (as row_results). */
function rowStatusOf(batchState: string | null): string {
  return batchState === 'accepted' || batchState === 'failed' || batchState === 'unknown' ? batchState : 'pending';
}

interface RejectedRow {
  line: number;
  error: string;
  phone_raw: string;
  app_id: string | null;
  template_id: string | null;
  datas: string | null;
  extras: string | null;
}

/** Writes NAME.rejected.csv when the file had invalid rows; returns its path, or undefined. */
export async function writeRejectedCsv(db: Db, fileId: number, outDir: string, baseName: string): Promise<string | undefined> {
  const count = db.prepare('SELECT invalid FROM files WHERE id = ?').pluck().get(fileId) as number;
  if (count === 0) return undefined;
  // Left to itself SQLite walks every row of the file in id order (no sort needed); the index of
  // invalid rows and a sort of those few is ten times quicker (0.34 -> 0.03 s for 1M rows).
  const query = `SELECT r.line, r.error, r.phone_raw, g.app_id, g.template_id, g.datas, r.extras
                 FROM rows r INDEXED BY rows_invalid LEFT JOIN groups g ON g.id = r.group_id
                 WHERE r.file_id = ? AND r.intake = 'invalid' ORDER BY r.id`;
  const maxData = maxDataCount(db.prepare(query).iterate(fileId) as IterableIterator<RejectedRow>);
  const extraNames = extraColumnNames(db, fileId);
  const header = ['line', 'reason', 'phone', 'appId', 'templateId', ...Array.from({ length: maxData }, (_, i) => `data${i + 1}`), ...extraNames];
  const file = path.join(outDir, `${baseName}.rejected.csv`);
  const writer = createCsvWriter(file, header);
  for (const r of db.prepare(query).iterate(fileId) as IterableIterator<RejectedRow>) {
    const datas = r.datas ? (JSON.parse(r.datas) as string[]) : [];
    const extras = r.extras ? (JSON.parse(r.extras) as Record<string, string>) : {};
    writer.write([
      String(r.line),
      r.error,
      r.phone_raw,
      r.app_id ?? '',
      r.template_id ?? '',
      ...Array.from({ length: maxData }, (_, i) => datas[i] ?? ''),
      ...extraNames.map((n) => extras[n] ?? ''),
    ]);
  }
  await writer.close();
  return file;
}

function maxDataCount(rows: IterableIterator<RejectedRow>): number {
  let max = 0;
  for (const r of rows) if (r.datas) max = Math.max(max, (JSON.parse(r.datas) as string[]).length);
  return max;
}

/** Names of the columns the file had besides phone, app, template and values. */
function extraColumnNames(db: Db, fileId: number): string[] {
  const header = db.prepare('SELECT header FROM files WHERE id = ?').pluck().get(fileId) as string | null;
  if (!header) return [];
  const parsed = JSON.parse(header) as { extras?: string[] };
  return parsed.extras ?? [];
}
