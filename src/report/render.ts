// `smsdrop report` output in its three forms. table: for people at a terminal. json: keys as in
// v_files (one object per file, or for one file the same keys plus failures, invalid_reasons and
// timing). csv: for spreadsheets, UTF-8 with BOM and formula-guarded; without FILE the v_files
// columns, with FILE one line per status (and per status code for failed and unknown rows),
// whose counts add up to the file's rows.
import { FILE_COLUMNS, type FileLine, type FileReport } from './summary.js';
import { renderTable } from './common.js';

export const REPORT_FORMATS = ['table', 'json', 'csv'] as const;
export type ReportFormat = (typeof REPORT_FORMATS)[number];

/** A CSV to write: header and rows of text cells. */
export interface CsvTable {
  header: string[];
  rows: string[][];
}

const cell = (v: string | number | null): string => (v === null ? '' : String(v));

export function fileListTable(files: readonly FileLine[]): string {
  if (files.length === 0) return 'no files in the journal yet';
  const head = ['id', 'name', 'status', 'rows', 'accepted', 'failed', 'unknown', 'invalid', 'duplicates', 'pending', 'requests', 'sha256', 'started', 'finished'];
  return renderTable(
    head,
    files.map((f) => [f.id, f.name, f.status, f.rows, f.accepted, f.failed, f.unknown, f.invalid, f.duplicates, f.pending, f.requests, f.sha256.slice(0, 12), f.started_at, f.finished_at]),
  );
}

export function fileListCsv(files: readonly FileLine[]): CsvTable {
  return { header: [...FILE_COLUMNS], rows: files.map((f) => FILE_COLUMNS.map((k) => cell(f[k]))) };
}

export function fileReportTable(r: FileReport): string {
  const out = [
    `${r.name}  (id ${r.id}, ${r.status})`,
    `sha256    ${r.sha256}`,
    `rows ${r.rows}  accepted ${r.accepted}  failed ${r.failed}  unknown ${r.unknown}  invalid ${r.invalid}  duplicates ${r.duplicates}  pending ${r.pending}`,
  ];
  if (r.repeats > 0) out.push(`of the duplicates, ${r.repeats} go with other files that sent their number the same message (smsdrop export ${r.id} --status duplicate names the file and line of each)`);
  if (r.failures.length > 0) {
    out.push('', 'Failures by status code:');
    out.push(renderTable(['status', 'code', 'class', 'rows', 'what to do', 'sample message'], r.failures.map((f) => [f.status, f.status_code ?? '-', f.class, f.count, f.what_to_do, f.sample_message])));
  }
  if (r.invalid_reasons.length > 0) {
    out.push('', `Invalid rows, not sent (the rows themselves: smsdrop export ${r.id} --status invalid):`);
    out.push(renderTable(['reason', 'rows'], r.invalid_reasons.map((i) => [i.reason, i.count])));
  }
  const t = r.timing;
  out.push('', `requests ${t.requests}  first send ${t.first_send ?? '-'}  last send ${t.last_send ?? '-'}  ${t.requests_per_second === null ? '' : `${t.requests_per_second} requests/s`}`.trimEnd());
  return out.join('\n');
}

/** One line per outcome: accepted, invalid, duplicate, pending, then failed and unknown by code. */
export function fileReportCsv(r: FileReport): CsvTable {
  const header = ['file_id', 'file', 'status', 'status_code', 'class', 'rows', 'what_to_do', 'sample_message'];
  const line = (status: string, code: string | null, cls: string, count: number, what: string, sample: string | null) => [
    String(r.id), r.name, status, cell(code), cls, String(count), what, cell(sample),
  ];
  const rows = [
    line('accepted', null, '', r.accepted, 'nothing: the provider accepted these', null),
    line('invalid', null, '', r.invalid, `fix the rows in smsdrop export ${r.id} --status invalid and drop that file into the inbox`, r.invalid_reasons[0]?.reason ?? null),
    line('duplicate', null, '', r.duplicates, 'nothing: the same number with the same text appears earlier in the file, or in another file that sent it (the repeat window), and is sent once', null),
    line('pending', null, '', r.pending, 'not sent yet: the file is still in progress', null),
  ].filter((l) => l[5] !== '0');
  for (const f of r.failures) rows.push(line(f.status, f.status_code, f.class, f.count, f.what_to_do, f.sample_message));
  // failures hold every failed and unknown row, so these lines add up to the file's rows.
  return { header, rows };
}
