// `smsdrop export FILE [--status failed,unknown,...] [--out PATH]`: the per-row results of a file
// as CSV the intake accepts as it is. Columns: phone (as written), appId, templateId, data1..N,
// the file's other columns, then line, status, status_code and message, which the intake keeps as
// extra columns and never sends. So the rows can be fixed in Excel and dropped back into the
// inbox: cells are formula-guarded, and the intake unguards them, so the same text is sent.
// Dropped back, every row in the file is sent again: export only the rows to resend.
import path from 'node:path';
import type { Command } from 'commander';
import { configFor, exitOnUserError } from '../cli/common.js';
import type { FileRecord } from '../journal/files.js';
import type { Journal } from '../journal/open.js';
import { mostValues, type RecipientRow, recipients } from '../journal/reads.js';
import type { RowStatus } from '../journal/states.js';
import { normaliseHeaderName } from '../intake/headers.js';
import { parseRowStatuses, requireJournal, resolveFile, writeCsv } from './common.js';

/** Result columns after the file's own: the intake keeps them as extras. */
export const EXPORT_STATUS_COLUMNS = ['line', 'status', 'status_code', 'message'] as const;

export interface ExportOptions {
  /** Only rows in these statuses; default every row. */
  statuses?: readonly RowStatus[];
  /** A file path, or "-" / undefined for standard output. */
  out?: string;
}

export function registerExportCommand(program: Command): void {
  program
    .command('export')
    .description('per-row results of FILE as CSV that can be fixed and dropped back into the inbox')
    .argument('<file>', 'file id, name or sha256 prefix')
    .option(
      '--status <list>',
      'only rows in these statuses: invalid, duplicate, pending, accepted, failed, unknown (comma-separated)',
    )
    .option(
      '--out <path>',
      'where to write; "-" for standard output (default: NAME.export.csv in the current folder)',
    )
    .action(async (file: string, opts: { status?: string; out?: string }, command: Command) => {
      const config = configFor(command, { forReading: true });
      let db: Journal | undefined;
      try {
        const statuses = opts.status === undefined ? undefined : parseRowStatuses(opts.status);
        db = requireJournal(config.dataDir);
        const record = resolveFile(db, file);
        const out = opts.out ?? defaultExportName(record);
        const rows = await exportFile(db, record, { ...(statuses ? { statuses } : {}), out });
        if (out !== '-') process.stderr.write(`${rows} rows of ${record.name} written to ${out}\n`);
      } catch (err) {
        exitOnUserError(err);
        throw err;
      } finally {
        db?.close();
      }
    });
}

/** NAME.export.csv in the current folder, NAME being the file's name without .csv. */
export function defaultExportName(file: FileRecord): string {
  return `${path.basename(file.name).replace(/\.csv$/i, '')}.export.csv`;
}

/** Writes the file's rows (in file order) as CSV; returns how many. */
export async function exportFile(
  db: Journal,
  file: FileRecord,
  options: ExportOptions = {},
): Promise<number> {
  const dataCount = mostValues(db, file.id);
  const extraNames = keptExtraNames(file);
  const header = [
    'phone',
    'appId',
    'templateId',
    ...Array.from({ length: dataCount }, (_, i) => `data${i + 1}`),
    ...extraNames,
    ...EXPORT_STATUS_COLUMNS,
  ];
  return writeCsv(
    options.out,
    header,
    cellsOf(recipients(db, file.id, options.statuses ?? []), dataCount, extraNames),
    { digitsAsText: true },
  );
}

function* cellsOf(
  rows: IterableIterator<RecipientRow>,
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
