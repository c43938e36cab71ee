// `smsdrop report [FILE] [--format table|json|csv] [--wide]`: who got it, who did not, and why.
// Reads the journal only (never the lock), so it works while the daemon is sending.
import type { Command } from 'commander';
import { UsageError } from '../../errors.js';
import type { JournalReader } from '../../ports/index.js';
import { openReader } from '../../journals/index.js';
import { resolveFile, writeCsv } from '../../report/common.js';
import {
  fileListCsv,
  fileListTable,
  fileReportCsv,
  fileReportTable,
  REPORT_FORMATS,
  type ReportFormat,
} from '../../report/render.js';
import { acceptedSegments, type Cost, costOf, type Pricing } from '../../report/cost.js';
import { type FileReport, fileReport } from '../../report/summary.js';
import type { TemplateBook } from '../../config/templates.js';
import { configFor, exitOnUserError, exitWithError } from '../common.js';

export function registerReportCommand(program: Command): void {
  program
    .command('report')
    .description(
      'one line per file; with FILE (id, name or sha256 prefix): its counts, failures by code with what to do, and timing',
    )
    .argument('[file]', 'file id, name or sha256 prefix')
    .option('--format <format>', 'table, json or csv (CSV is UTF-8 with BOM, for Excel)')
    .option('--wide', "with FILE: the table's every cell whole, wider than 100 columns")
    .action(async (file: string | undefined, opts: { wide?: boolean }, command: Command) => {
      const format = takeReportFormat(command);
      const config = configFor(command, { forReading: true });
      const reader = await openReader(config);
      try {
        await printReport(reader, file, format, {
          ...(config.timezone ? { zone: config.timezone } : {}),
          wide: opts.wide ?? false,
          pricing: config,
          ...(config.templates ? { templates: config.templates } : {}),
        });
      } catch (err) {
        exitOnUserError(err);
        throw err;
      } finally {
        reader?.close();
      }
    });
}

function takeReportFormat(command: Command): ReportFormat {
  const value = (command.opts().format ?? 'table') as string;
  if (!(REPORT_FORMATS as readonly string[]).includes(value)) {
    exitWithError(
      new UsageError(`report: --format expects ${REPORT_FORMATS.join(', ')}; got "${value}"`),
    );
  }
  return value as ReportFormat;
}

export interface ReportOptions {
  /** Tables show times in this zone (the host's when unset); JSON and CSV keep UTC. */
  zone?: string;
  /** The table of one file with every cell whole, past 100 columns. */
  wide?: boolean;
  /** With a price, one file's report has its cost; the templates count its segments. */
  pricing?: Pricing;
  templates?: TemplateBook;
}

/** Prints the report; a journal that does not exist yet is an empty list (and an unknown FILE). */
export async function printReport(
  reader: JournalReader | undefined,
  file: string | undefined,
  format: ReportFormat,
  { zone, wide = false, pricing = {}, templates }: ReportOptions = {},
): Promise<void> {
  if (file === undefined) {
    const files = reader ? await reader.listFiles() : [];
    if (format === 'json') process.stdout.write(`${JSON.stringify(files, null, 2)}\n`);
    else if (format === 'csv') await writeCsvTable(fileListCsv(files));
    else process.stdout.write(`${fileListTable(files, zone)}\n`);
    return;
  }
  if (!reader)
    throw new UsageError(
      `no file "${file}": the journal is empty (nothing has been sent from this data directory)`,
    );
  const record = await resolveFile(reader, file);
  const report = await withCost(
    await fileReport(reader, record.id),
    record.pruned_at === null ? reader : undefined,
    pricing,
    templates,
  );
  if (format === 'json') process.stdout.write(`${JSON.stringify(report, null, 2)}\n`);
  else if (format === 'csv') await writeCsvTable(fileReportCsv(report));
  else process.stdout.write(`${fileReportTable(report, zone, wide)}\n`);
}

function writeCsvTable(table: { header: string[]; rows: string[][] }): Promise<number> {
  return writeCsv(undefined, table.header, table.rows);
}

/**
 * The report with the cost of what the provider accepted, when a price is set: the accepted
 * messages' segments, or one per number without the templates or the rows (pruned).
 */
async function withCost(
  report: FileReport,
  rows: JournalReader | undefined,
  pricing: Pricing,
  templates: TemplateBook | undefined,
): Promise<FileReport & { cost?: Cost }> {
  if (pricing.pricePerSegment === undefined) return report;
  const counted = rows && (await acceptedSegments(rows, report.id, templates));
  const cost = counted
    ? costOf(counted.segments, pricing, counted.atLeast)
    : costOf(report.accepted, pricing, true);
  return cost ? { ...report, cost } : report;
}
