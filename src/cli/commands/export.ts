// `smsdrop export FILE [--status failed,unknown,...] [--out PATH]`: the per-row results of a file
// as CSV the intake accepts as it is (report/export.ts), to fix and drop back into the inbox.
import path from 'node:path';
import type { Command } from 'commander';
import { SmsdropError } from '../../errors.js';
import type { FileRecord, JournalReader } from '../../ports/index.js';
import { parseRowStatuses, requireJournal, resolveFile } from '../../report/common.js';
import { exportFile } from '../../report/export.js';
import { configFor, exitOnUserError } from '../common.js';
import { stemOf } from '../../datadir/names.js';

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
      let reader: JournalReader | undefined;
      try {
        const statuses = opts.status === undefined ? undefined : parseRowStatuses(opts.status);
        reader = await requireJournal(config);
        const record = await resolveFile(reader, file);
        if (record.pruned_at !== null) throw rowsPruned(record);
        const out = opts.out ?? defaultExportName(record);
        const rows = await exportFile(reader, record, { ...(statuses ? { statuses } : {}), out });
        if (out !== '-') process.stderr.write(`${rows} rows of ${record.name} written to ${out}\n`);
      } catch (err) {
        exitOnUserError(err);
        throw err;
      } finally {
        reader?.close();
      }
    });
}

/** NAME.export.csv in the current folder, NAME being the list's stem (a.tsv -> a.export.csv). */
export function defaultExportName(file: FileRecord): string {
  return `${stemOf(path.basename(file.name))}.export.csv`;
}

/**
 * A pruned file keeps its counts, not its rows: an export would be an empty list that reads as a
 * file sent to nobody.
 */
function rowsPruned(file: FileRecord): SmsdropError {
  return new SmsdropError(
    'E_ROWS_PRUNED',
    `${file.name} (id ${file.id}): its rows were pruned on ${file.pruned_at} (SMSDROP_KEEP), so there is nothing to export: \`smsdrop report ${file.id}\` still has its counts, no longer who got it`,
  );
}
