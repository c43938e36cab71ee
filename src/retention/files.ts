// A pruned file's files in done/ and failed/: the CSV itself and what was written next to it
// (result, rejected, error, duplicate notes) hold the same numbers and values as its rows, so they
// go with them. A CSV there is known by its bytes (sha256), as the journal knows it; it goes once
// every record of those bytes is pruned (a re-dropped copy filed as a duplicate goes with them).
// Only CSVs older than the cut-off are hashed: a file pruned now ended before it, and was written
// before it ended. Files the journal does not know (a .xlsx refused at the door) are left alone.
import { createHash } from 'node:crypto';
import { createReadStream, readdirSync, rmSync, statSync } from 'node:fs';
import path from 'node:path';
import { COMPANIONS, isListName, stemOf } from '../datadir/names.js';
import type { ReadStore } from '../ports/index.js';

export interface RemovedFiles {
  /** Paths relative to the data directory. */
  files: string[];
  bytes: number;
}

const WRITTEN_NEXT = [...COMPANIONS, '.grown.txt'];

/**
 * Removes (or with dryRun, lists) the files in done/ and failed/ of pruned files older than
 * `before` (ms); a dry run counts the files it would prune (`pruning`) as pruned.
 */
export async function removeFilesOfPruned(
  reads: Pick<ReadStore, 'recordsOfBytes'>,
  dataDir: string,
  before: number,
  dryRun: boolean,
  pruning: ReadonlySet<number>,
): Promise<RemovedFiles> {
  const removed: RemovedFiles = { files: [], bytes: 0 };
  for (const folder of ['done', 'failed']) {
    const dir = path.join(dataDir, folder);
    const names = listNames(dir);
    const present = new Set(names);
    for (const name of names) {
      if (!isListName(name) || WRITTEN_NEXT.some((suffix) => name.endsWith(suffix))) continue;
      const stat = statSync(path.join(dir, name), { throwIfNoEntry: false });
      if (!stat?.isFile() || stat.mtimeMs >= before) continue;
      const records = await reads.recordsOfBytes(await sha256Of(path.join(dir, name)));
      if (records.length === 0 || !records.every((r) => r.pruned || pruning.has(r.id))) continue;
      for (const file of [name, ...WRITTEN_NEXT.map((suffix) => stemOf(name) + suffix)].filter(
        (n) => present.has(n),
      )) {
        const full = path.join(dir, file);
        removed.bytes += statSync(full, { throwIfNoEntry: false })?.size ?? 0;
        removed.files.push(path.join(folder, file));
        if (!dryRun) rmSync(full, { force: true });
      }
    }
  }
  return removed;
}

function listNames(dir: string): string[] {
  try {
    return readdirSync(dir);
  } catch {
    return []; // no such folder: nothing was ever filed there
  }
}

async function sha256Of(file: string): Promise<string> {
  const hash = createHash('sha256');
  for await (const chunk of createReadStream(file)) hash.update(chunk as Buffer);
  return hash.digest('hex');
}
