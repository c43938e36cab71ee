// The files people read after a run: NAME.result.csv (one line per input row, with its final
// status) and NAME.rejected.csv (the rows that were invalid, with the reason, in columns the
// intake accepts, so they can be fixed and dropped back). Both are Excel-safe (see csvio).
import path from 'node:path';
import { createCsvWriter } from '../csvio/index.js';
import type { Db } from '../journal/open.js';

export const RESULT_HEADER = ['line', 'phone', 'normalised_phone', 'status', 'status_code', 'message', 'sms_message_sid', 'date_created'];

/** Writes NAME.result.csv into outDir; returns its path. */
export async function writeResultCsv(db: Db, fileId: number, outDir: string, baseName: string): Promise<string> {
  const file = path.join(outDir, `${baseName}.result.csv`);
  const writer = createCsvWriter(file, RESULT_HEADER);
  // The row_results view says the same, row by row. For a million rows it is faster to read the
  // file's span of row ids straight from the table (a file's rows are written together, so the
  // span holds few others: `+r.file_id` filters them without the index) as raw arrays.
  const span = db.prepare('SELECT min(id) AS lo, max(id) AS hi FROM rows WHERE file_id = ?').get(fileId) as { lo: number | null; hi: number | null };
  const rows = db
    .prepare(
      `SELECT r.line, r.phone_raw, r.phone, r.intake, r.error, r.duplicate_of,
              b.state, b.status_code, b.status_msg, b.sms_message_sid, b.date_created
       FROM rows r LEFT JOIN batches b ON b.id = r.batch_id
       WHERE r.id BETWEEN ? AND ? AND +r.file_id = ? ORDER BY r.id`,
    )
    .raw(true)
    .iterate(span.lo ?? 0, span.hi ?? -1, fileId) as IterableIterator<ResultTuple>;
  const lineOf = db.prepare('SELECT line FROM rows WHERE id = ?').pluck();
  for (const [line, phoneRaw, phone, intake, error, duplicateOf, state, code, msg, sid, created] of rows) {
    const cells = [String(line), phoneRaw, phone ?? ''];
    if (intake === 'invalid') cells.push('invalid', '', error ?? '', '', '');
    else if (intake === 'duplicate') cells.push('duplicate', '', `duplicate of line ${String(lineOf.get(duplicateOf))}`, '', '');
    else cells.push(rowStatusOf(state), code ?? '', msg ?? '', sid ?? '', created ?? '');
    writer.write(cells);
  }
  await writer.close();
  return file;
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
  const query = `SELECT r.line, r.error, r.phone_raw, g.app_id, g.template_id, g.datas, r.extras
                 FROM rows r LEFT JOIN groups g ON g.id = r.group_id
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
