// Keeping the journal small and safe: pruning old files, a backup copy, its size on disk.
// Migrating is openWriter's (and, under the lock, openReader's) job, not a verb.
import type { Awaitable } from './awaitable.js';
import type { BackupResult, JournalSize, PruneOptions, PruneResult } from './records.js';

/**
 * The files being processed now (the writer's own set, asked again before each file is pruned):
 * pruning leaves them alone, also one taken up while it runs.
 */
export interface BusyFiles {
  has(fileId: number): boolean;
}

export interface Maintenance {
  prune(o: PruneOptions, busy: BusyFiles): Promise<PruneResult>;
  backup(targetDir: string): Promise<BackupResult>;
  size(): Awaitable<JournalSize>;
}
