// Keeping the journal small and safe: pruning old files, a backup copy, its size on disk.
// Migrating is openWriter's (and, under the lock, openReader's) job, not a verb.
import type { Awaitable } from './awaitable.js';
import type { BackupResult, JournalSize, PruneOptions, PruneResult } from './records.js';

export interface Maintenance {
  prune(o: PruneOptions): Promise<PruneResult>;
  backup(targetDir: string): Promise<BackupResult>;
  size(): Awaitable<JournalSize>;
}
