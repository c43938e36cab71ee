// The per-row results of a file (`smsdrop export`) as CSV the intake accepts as it is. Columns:
// phone (as written), appId, templateId, data1..N, the file's other columns, then line, status,
// status_code and message, which the intake keeps as extra columns and never sends. So the rows
// can be fixed in Excel and dropped back into the inbox: cells are formula-guarded, and the intake
// unguards them, so the same text is sent. Dropped back, every row in the file is sent again:
// export only the rows to resend.
import type { ExportReads, FileRecord, Pages, RecipientRow } from '../ports/index.js';
import type { RowStatus } from '../ports/states.js';
import { normaliseHeaderName } from '../intake/headers.js';
import { writeCsvPages } from './common.js';

/** Result columns after the file's own: the intake keeps them as extras. */
export const EXPORT_STATUS_COLUMNS = ['line', 'status', 'status_code', 'message'] as const;

export interface ExportOptions {
  /** Only rows in these statuses; default every row. */
  statuses?: readonly RowStatus[];
  /** A file path, or "-" / undefined for standard output. */
  out?: string;
}

/** Writes the file's rows (in file order) as CSV; returns how many. */
export async function exportFile(
  reads: Pick<ExportReads, 'recipients' | 'mostValues'>,
  file: FileRecord,
  options: ExportOptions = {},
): Promise<number> {
  const dataCount = await reads.mostValues(file.id);
  const extraNames = keptExtraNames(file);
  const header = [
    'phone',
    'appId',
    'templateId',
    ...Array.from({ length: dataCount }, (_, i) => `data${i + 1}`),
    ...extraNames,
    ...EXPORT_STATUS_COLUMNS,
  ];
  return writeCsvPages(
    options.out,
    header,
    pagesOfCells(reads.recipients(file.id, options.statuses ?? []), dataCount, extraNames),
    { digitsAsText: true },
  );
}

async function* pagesOfCells(
  pages: Pages<RecipientRow>,
  dataCount: number,
  extraNames: readonly string[],
): AsyncGenerator<Iterable<string[]>> {
  for await (const page of pages) yield cellsOf(page, dataCount, extraNames);
}

function* cellsOf(
  rows: readonly RecipientRow[],
  dataCount: number,
  extraNames: readonly string[],
): Generator<string[]> {
  for (const r of rows) {
    const datas = r.datas ? (JSON.parse(r.datas) as string[]) : [];
    const extras = r.extras ? (JSON.parse(r.extras) as Record<string, string>) : {};
    yield [
      r.phone_raw,
      r.app_id ?? '',
      r.template_id ?? '',
      ...Array.from({ length: dataCount }, (_, i) => datas[i] ?? ''),
      ...extraNames.map((n) => extras[n] ?? ''),
      String(r.line),
      r.status,
      r.status_code ?? '',
      r.status_msg ?? '',
    ];
  }
}

/**
 * The file's other columns, minus any named like a result column: those come from an earlier
 * export dropped back, and their old values would sit beside the new ones under the same name.
 */
function keptExtraNames(file: FileRecord): string[] {
  if (!file.header) return [];
  const extras = (JSON.parse(file.header) as { extras?: string[] }).extras ?? [];
  const taken = new Set(EXPORT_STATUS_COLUMNS.map(normaliseHeaderName));
  return extras.filter((name) => !taken.has(normaliseHeaderName(name)));
}
