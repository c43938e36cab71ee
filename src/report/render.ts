// `smsdrop report` output in its three forms. table: for people at a terminal. json: keys as in
// v_files (one object per file, or for one file the same keys plus failures, invalid_reasons and
// timing). csv: for spreadsheets, UTF-8 with BOM and formula-guarded; without FILE the v_files
// columns, with FILE one line per status (and per status code for failed and unknown rows),
// whose counts add up to the file's rows.
import { formatMoment, zoneName } from '../log/time.js';
import { FILE_COLUMNS, type FileLine, type FileReport } from './summary.js';
import { columns, cutMiddle } from './fit.js';

export { columns } from './fit.js';
export { fileReportTable } from './fileTable.js';

/** The file list fits a terminal this wide; the rest of a file is in `report FILE`. */
export const LIST_WIDTH = 100;
/** A name is cut (in its middle) to fit, but never below this. */
const MIN_NAME_WIDTH = 12;
const GAP = '  ';

export const REPORT_FORMATS = ['table', 'json', 'csv'] as const;
export type ReportFormat = (typeof REPORT_FORMATS)[number];

/** A CSV to write: header and rows of text cells. */
export interface CsvTable {
  header: string[];
  rows: string[][];
}

const cell = (v: string | number | null): string => (v === null ? '' : String(v));

/**
 * One line per file, in LIST_WIDTH columns: the counts that say whether a file is finished and
 * how it went. The sha256, duplicates, requests and timing are in `report FILE`.
 */
export function fileListTable(files: readonly FileLine[], zone?: string): string {
  if (files.length === 0) return 'no files in the journal yet';
  const head = [
    'id',
    'name',
    'status',
    'rows',
    'accepted',
    'failed',
    'unknown',
    'invalid',
    'pending',
    'started',
  ];
  const rows = files.map((f) => [
    String(f.id),
    f.name,
    f.status,
    ...[f.rows, f.accepted, f.failed, f.unknown, f.invalid, f.pending].map(String),
    formatMoment(f.started_at, zone, 'minutes'),
  ]);
  const widths = head.map((h, i) => Math.max(h.length, ...rows.map((r) => columns(r[i]!))));
  const others =
    widths.reduce((sum, w, i) => (i === 1 ? sum : sum + w), 0) + GAP.length * (head.length - 1);
  widths[1] = Math.min(widths[1]!, Math.max(MIN_NAME_WIDTH, LIST_WIDTH - others));
  const pad = (text: string, width: number, right: boolean) =>
    right ? ' '.repeat(width - columns(text)) + text : text + ' '.repeat(width - columns(text));
  const line = (cells: string[]) =>
    cells
      .map((c, i) =>
        pad(i === 1 ? cutMiddle(c, widths[i]!) : c, widths[i]!, i !== 1 && i !== 2 && i !== 9),
      )
      .join(GAP)
      .trimEnd();
  const out = [line(head), line(widths.map((w) => '-'.repeat(w))), ...rows.map(line)];
  out.push(
    '',
    `started: in ${zoneName(zone)}. All of a file (sha256, duplicates, failures, timing): smsdrop report ID`,
  );
  return out.join('\n');
}

export function fileListCsv(files: readonly FileLine[]): CsvTable {
  return { header: [...FILE_COLUMNS], rows: files.map((f) => FILE_COLUMNS.map((k) => cell(f[k]))) };
}

/** One line per outcome: accepted, invalid, duplicate, pending, then failed and unknown by code. */
export function fileReportCsv(r: FileReport): CsvTable {
  const header = [
    'file_id',
    'file',
    'status',
    'status_code',
    'class',
    'rows',
    'what_to_do',
    'sample_message',
  ];
  const line = (
    status: string,
    code: string | null,
    cls: string,
    count: number,
    what: string,
    sample: string | null,
  ) => [String(r.id), r.name, status, cell(code), cls, String(count), what, cell(sample)];
  const rows = [
    line('accepted', null, '', r.accepted, 'nothing: the provider accepted these', null),
    line(
      'invalid',
      null,
      '',
      r.invalid,
      `fix the rows in smsdrop export ${r.id} --status invalid and drop that file into the inbox`,
      r.invalid_reasons[0]?.reason ?? null,
    ),
    line(
      'duplicate',
      null,
      '',
      r.duplicates,
      'nothing: the same number with the same text appears earlier in the file, or in another file that sent it (the repeat window), and is sent once',
      null,
    ),
    line('pending', null, '', r.pending, 'not sent yet: the file is still in progress', null),
  ].filter((l) => l[5] !== '0');
  for (const f of r.failures)
    rows.push(line(f.status, f.status_code, f.class, f.count, f.what_to_do, f.sample_message));
  // failures hold every failed and unknown row, so these lines add up to the file's rows.
  return { header, rows };
}
