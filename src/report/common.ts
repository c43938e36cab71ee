// What the report commands share: the journal opened for reading only (journal/index.ts
// openReader: no lock, so reports work while the daemon sends; never upgraded under another
// process), a FILE argument resolved to exactly one file, row-status lists, and table and CSV
// output.
import { once } from 'node:events';
import path from 'node:path';
import { createRequire } from 'node:module';
import type TableType from 'cli-table3';
import { createCsvWriter, csvLine } from '../csvio/index.js';
import { UsageError } from '../errors.js';
import type { FileReads, FileRecord, JournalReader } from '../ports/index.js';
import { type JournalSettings, openReader } from '../journals/index.js';
import { ROW_STATUS, type RowStatus } from '../ports/states.js';

/** The journal's reader, or a usage error naming the data directory. */
export async function requireJournal(config: JournalSettings): Promise<JournalReader> {
  const reader = await openReader(config);
  if (!reader)
    throw new UsageError(
      `no journal in ${config.dataDir}: nothing has been sent from this data directory (check --data-dir)`,
    );
  return reader;
}

const SHA_PREFIX = /^[0-9a-f]{6,64}$/i;

/**
 * FILE as the operator wrote it: a file id, a name (a path is taken by its base name) or a
 * sha256 prefix of at least 6 characters. Exactly one file must match.
 */
export async function resolveFile(
  reads: Pick<FileReads, 'file' | 'filesNamed' | 'filesByShaPrefix'>,
  query: string,
): Promise<FileRecord> {
  const q = query.trim();
  if (/^\d+$/.test(q)) {
    const byId = await reads.file(Number(q));
    if (byId) return byId;
  }
  const matches = new Map<number, FileRecord>();
  for (const f of await reads.filesNamed(path.basename(q))) matches.set(f.id, f);
  if (SHA_PREFIX.test(q)) for (const f of await reads.filesByShaPrefix(q)) matches.set(f.id, f);
  const found = [...matches.values()];
  if (found.length === 1) return found[0]!;
  if (found.length === 0)
    throw new UsageError(
      `no file "${query}" in the journal: give a file id, name or sha256 prefix (\`smsdrop report\` lists them)`,
    );
  const list = found
    .map(
      (f) =>
        `id ${f.id} (${f.name}, sha256 ${f.sha256.slice(0, 12)}, ${f.status}, ${f.created_at})`,
    )
    .join('; ');
  throw new UsageError(`"${query}" matches ${found.length} files: ${list}. Give the id.`);
}

const STATUS_NAMES: Record<string, RowStatus> = { ...ROW_STATUS, duplicates: ROW_STATUS.duplicate };

/** "failed,unknown" to row statuses; an unknown name is a usage error. */
export function parseRowStatuses(text: string): RowStatus[] {
  const names = text
    .split(',')
    .map((s) => s.trim().toLowerCase())
    .filter((s) => s !== '');
  if (names.length === 0)
    throw new UsageError(`--status expects a list such as failed,unknown; got "${text}"`);
  const statuses = names.map((name) => {
    const status = STATUS_NAMES[name];
    if (!status)
      throw new UsageError(
        `unknown status "${name}": expected one or more of ${Object.values(ROW_STATUS).join(', ')}`,
      );
    return status;
  });
  return [...new Set(statuses)];
}

/** A plain table (no colours: the output is often piped or pasted). */
export function renderTable(head: string[], rows: Array<Array<string | number | null>>): string {
  // Loaded when a table is drawn: the sending commands never draw one.
  const Table = createRequire(import.meta.url)('cli-table3') as typeof TableType;
  const table = new Table({ head, style: { head: [], border: [] } });
  for (const row of rows) table.push(row.map((cell) => cell ?? ''));
  return table.toString();
}

/**
 * Writes CSV (UTF-8 with BOM, Excel formula guard) to a file, or to standard output when target
 * is undefined or "-". Returns the rows written.
 */
export function writeCsv(
  target: string | undefined,
  header: readonly string[],
  rows: Iterable<readonly string[]>,
  options: { digitsAsText?: boolean } = {},
): Promise<number> {
  return writeCsvPages(target, header, [rows], options);
}

/** writeCsv of rows that come a page at a time (one microtask a page, never one a row). */
export async function writeCsvPages(
  target: string | undefined,
  header: readonly string[],
  pages: Iterable<Iterable<readonly string[]>> | AsyncIterable<Iterable<readonly string[]>>,
  options: { digitsAsText?: boolean } = {},
): Promise<number> {
  let count = 0;
  const digitsAsText = options.digitsAsText ?? false;
  if (target !== undefined && target !== '-') {
    const writer = createCsvWriter(target, header, { digitsAsText });
    try {
      for await (const page of pages)
        for (const row of page) {
          writer.write(row);
          count++;
        }
    } finally {
      await writer.close();
    }
    return count;
  }
  let pending = '\uFEFF' + csvLine(header);
  for await (const page of pages)
    for (const row of page) {
      pending += csvLine(row, digitsAsText);
      count++;
      if (pending.length >= 64 * 1024) {
        if (!process.stdout.write(pending)) await once(process.stdout, 'drain');
        pending = '';
      }
    }
  if (!process.stdout.write(pending)) await once(process.stdout, 'drain');
  return count;
}

/** A summary line that is there only when its text is (spread into the lines). */
export function optionalLine(label: string, text: string | undefined): string[] {
  return text === undefined ? [] : [`${label}${text}`];
}

/** "  cancelled N" for a summary's counts line, when an operator cancelled rows; else nothing. */
export function cancelledCount(counts: { cancelled?: number }): string {
  return counts.cancelled ? `  cancelled ${counts.cancelled}` : '';
}
