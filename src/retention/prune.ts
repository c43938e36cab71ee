// Pruning, for `smsdrop prune` and the daemon's daily prune: the journal's
// rows of files that ended longer ago than SMSDROP_KEEP (journal/prune.ts), then their files in
// done/ and failed/ (files.ts). Says what went: files, records, bytes.
import type { Keep } from '../config/settings/durations.js';
import type { BusyFiles, Maintenance, PruneResult, ReadStore } from '../ports/index.js';
import { formatBytes } from '../log/duration.js';
import { type RemovedFiles, removeFilesOfPruned } from './files.js';

export interface PruneReport extends PruneResult {
  endedBefore: string;
  dryRun: boolean;
  removed: RemovedFiles;
}

/** What pruning works through: a JournalHandle, or a reader (whose prune only says what). */
export interface PruneTarget {
  maintenance: Pick<Maintenance, 'prune'>;
  reads: Pick<ReadStore, 'recordsOfBytes'>;
}

export interface PruneRun {
  dryRun?: boolean;
  suppressed?: boolean;
  signal?: AbortSignal;
  /** The files being processed now: left alone (none when the caller holds the lock alone). */
  busy: BusyFiles;
}

/** Prunes what ended longer than `keep` ago: the journal, then the files on disk. */
export async function prune(
  journal: PruneTarget,
  dataDir: string,
  keep: Keep,
  options: PruneRun,
): Promise<PruneReport> {
  const cutoff = Date.now() - keep.ms;
  const endedBefore = new Date(cutoff).toISOString();
  const dryRun = options.dryRun === true;
  const result = await journal.maintenance.prune(
    { endedBefore, dryRun, suppressed: options.suppressed, signal: options.signal },
    options.busy,
  );
  const removed = await removeFilesOfPruned(
    journal.reads,
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
