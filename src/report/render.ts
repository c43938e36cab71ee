// `smsdrop report` output in its three forms. table: for people at a terminal. json: keys as in
// v_files (one object per file, or for one file the same keys plus failures, invalid_reasons and
// timing). csv: for spreadsheets, UTF-8 with BOM and formula-guarded; without FILE the v_files
// columns, with FILE one line per status (and per status code for failed and unknown rows),
// whose counts add up to the file's rows.
import { formatMoment, zoneName } from '../log/time.js';
import { FILE_COLUMNS, type FileLine, type FileReport } from './summary.js';
import { renderTable } from './common.js';

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

/**
 * Columns a terminal gives `text`: two for a wide (CJK, full-width) character, one for the others.
 */
export function columns(text: string): number {
  let n = 0;
  for (const ch of text) n += isWide(ch.codePointAt(0)!) ? 2 : 1;
  return n;
}

function isWide(cp: number): boolean {
  return (
    (cp >= 0x1100 && cp <= 0x115f) ||
    (cp >= 0x2e80 && cp <= 0xa4cf && cp !== 0x303f) ||
    (cp >= 0xac00 && cp <= 0xd7a3) ||
    (cp >= 0xf900 && cp <= 0xfaff) ||
    (cp >= 0xfe30 && cp <= 0xfe4f) ||
    (cp >= 0xff00 && cp <= 0xff60) ||
    (cp >= 0xffe0 && cp <= 0xffe6) ||
    (cp >= 0x20000 && cp <= 0x3fffd)
  );
}

/** `text` in at most `width` columns, its middle replaced by "…" when it is wider. */
function cutMiddle(text: string, width: number): string {
  if (columns(text) <= width) return text;
  const chars = [...text];
  let head = '';
  let tail = '';
  let used = 1; // the "…"
  for (let i = 0, j = chars.length - 1; i <= j;) {
    const take = columns(head) <= columns(tail) ? chars[i]! : chars[j]!;
    if (used + columns(take) > width) break;
    used += columns(take);
    if (take === chars[i] && columns(head) <= columns(tail)) {
      head += take;
      i++;
    } else {
      tail = take + tail;
      j--;
    }
  }
  return `${head}…${tail}`;
}

export function fileListCsv(files: readonly FileLine[]): CsvTable {
  return { header: [...FILE_COLUMNS], rows: files.map((f) => FILE_COLUMNS.map((k) => cell(f[k]))) };
}

export function fileReportTable(r: FileReport, zone?: string): string {
  const out = [
    `${r.name}  (id ${r.id}, ${r.status})`,
    `sha256    ${r.sha256}`,
    `rows ${r.rows}  accepted ${r.accepted}  failed ${r.failed}  unknown ${r.unknown}  invalid ${r.invalid}  duplicates ${r.duplicates}  pending ${r.pending}`,
  ];
  if (r.repeats > 0)
    out.push(
      `of the duplicates, ${r.repeats} go with other files that sent their number the same message (smsdrop export ${r.id} --status duplicate names the file and line of each)`,
    );
  if (r.failures.length > 0) {
    out.push('', 'Failures by status code:');
    out.push(
      renderTable(
        ['status', 'code', 'class', 'rows', 'what to do', 'sample message'],
        r.failures.map((f) => [
          f.status,
          f.status_code ?? '-',
          f.class,
          f.count,
          f.what_to_do,
          f.sample_message,
        ]),
      ),
    );
  }
  if (r.invalid_reasons.length > 0) {
    out.push(
      '',
      `Invalid rows, not sent (the rows themselves: smsdrop export ${r.id} --status invalid):`,
    );
    out.push(
      renderTable(
        ['reason', 'rows'],
        r.invalid_reasons.map((i) => [i.reason, i.count]),
      ),
    );
  }
  const t = r.timing;
  out.push(
    '',
    `requests ${t.requests}  first send ${formatMoment(t.first_send, zone)}  last send ${formatMoment(t.last_send, zone)}  ${t.requests_per_second === null ? '' : `${t.requests_per_second} requests/s`}`.trimEnd(),
  );
  out.push(
    `started ${formatMoment(r.started_at, zone)}  finished ${formatMoment(r.finished_at, zone)}  (times in ${zoneName(zone)})`,
  );
  return out.join('\n');
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
