// Pruning, for `smsdrop prune` and the daemon's daily prune: the journal's
// rows of files that ended longer ago than SMSDROP_KEEP (journal/prune.ts), then their files in
// done/ and failed/ (files.ts). Says what went: files, records, bytes.
import type { Journal } from '../journal/connection.js';
import type { Keep } from '../config/settings/durations.js';
import { pruneJournal, type PruneResult } from '../journal/prune.js';
import { formatBytes } from '../log/duration.js';
import { type RemovedFiles, removeFilesOfPruned } from './files.js';

export interface PruneReport extends PruneResult {
  endedBefore: string;
  dryRun: boolean;
  removed: RemovedFiles;
}

/** Prunes what ended longer than `keep` ago: the journal, then the files on disk. */
export async function prune(
  db: Journal,
  dataDir: string,
  keep: Keep,
  options: { dryRun?: boolean; suppressed?: boolean; signal?: AbortSignal } = {},
): Promise<PruneReport> {
  const cutoff = Date.now() - keep.ms;
  const endedBefore = new Date(cutoff).toISOString();
  const dryRun = options.dryRun === true;
  const result = await pruneJournal(db, {
    endedBefore,
    dryRun,
    suppressed: options.suppressed,
    signal: options.signal,
  });
  const removed = await removeFilesOfPruned(
    db,
    dataDir,
    cutoff,
    dryRun,
    new Set(dryRun ? result.files.map((f) => f.id) : []),
  );
  return { ...result, endedBefore, dryRun, removed };
}

/** One line for the log or the terminal. */
export function describePrune(r: PruneReport): string {
  const did = r.dryRun ? 'would prune' : 'pruned';
  const records = `${r.records.rows} rows, ${r.records.batches} batches, ${r.records.attempts} attempts`;
  const size = r.dryRun
    ? `journal ${formatBytes(r.bytesBefore)}`
    : `journal ${formatBytes(r.bytesBefore)} -> ${formatBytes(r.bytesAfter)}`;
  const files = `${r.dryRun ? 'would remove' : 'removed'} ${r.removed.files.length} file(s) from done/ and failed/ (${formatBytes(r.removed.bytes)})`;
  const suppressed =
    r.suppressed > 0
      ? `; ${r.suppressed} suppressed number(s) ${r.dryRun ? 'would be ' : ''}forgotten`
      : '';
  return `${did} ${r.files.length} file(s) that ended before ${r.endedBefore}: ${records}; ${size}; ${files}${suppressed}`;
}
