// The result file of a file that `resume` or `retry` sent on, written again from the journal
// where `send` or the daemon put it: left as it was, it would still say pending (or failed) rows
// that have gone since. `send` writes NAME.result.csv beside the file it read; the daemon files a
// file in done/ or failed/ under a name free there ("a.csv", "a (2).csv"...) with its result file
// beside it, and a duplicate drop gets the results of the file it repeats: every such copy of the
// file's bytes is written again.
import { existsSync, statSync } from 'node:fs';
import path from 'node:path';
import { stemOf } from '../datadir/names.js';
import { hashPrefix } from '../intake/inspect.js';
import type { FileRecord } from '../ports/index.js';
import type { ResultReads } from '../ports/results.js';
import { writeResultCsv } from './resultCsv.js';
import type { ResultSpools } from './spool.js';

/** Where a file's result files were written. */
export interface ResultPlaces {
  /** Result files (paths) to write again. */
  files: string[];
  /**
   * The file still lies in the daemon's processing/: the daemon files it, with its result file, in
   * done/ at its next start.
   */
  inProcessing: boolean;
}

/** The result files `send` or the daemon wrote for `file`, found from its journal record. */
export async function resultPlacesOf(file: FileRecord, dataDir: string): Promise<ResultPlaces> {
  if (file.path === null) return { files: [], inProcessing: false };
  const root = path.resolve(dataDir);
  if (path.dirname(file.path) !== path.join(root, 'processing')) {
    // Sent with `send`: beside the file it read, wherever that was (its folder may be gone).
    const dir = path.dirname(file.path);
    return {
      files: isFolder(dir) ? [path.join(dir, `${stemOf(file.name)}.result.csv`)] : [],
      inProcessing: false,
    };
  }
  const files: string[] = [];
  for (const dir of [path.join(root, 'done'), path.join(root, 'failed')])
    for (const name of filedNames(dir, file.name))
      if (await sameBytes(path.join(dir, name), file))
        files.push(path.join(dir, `${stemOf(name)}.result.csv`));
  return { files, inProcessing: existsSync(file.path) };
}

/**
 * Writes the file's result files again, each atomically (writeResultCsv); returns their paths. A
 * result file the daemon did not write (a copy filed without one) is not made.
 */
export async function rewriteResults(
  reads: ResultReads,
  file: FileRecord,
  places: ResultPlaces,
  spools?: ResultSpools,
): Promise<string[]> {
  const written: string[] = [];
  for (const target of places.files) {
    const dir = path.dirname(target);
    const base = path.basename(target).replace(/\.result\.csv$/, '');
    await writeResultCsv(reads, file.id, dir, base, spools);
    written.push(target);
  }
  return written;
}

/** The names the daemon may have filed `name` under in `dir` that have a result file beside. */
function filedNames(dir: string, name: string): string[] {
  const names: string[] = [];
  const ext = path.extname(name);
  const stem = ext ? name.slice(0, -ext.length) : name;
  // The daemon takes the first of "a.csv", "a (2).csv"... free in done/ and failed/: the ones it
  // used are the ones taken, up to the first free (a gap of a few, should some have been removed).
  for (let n = 1, gap = 0; gap < 5; n++) {
    const candidate = n === 1 ? name : `${stem} (${n})${ext}`;
    if (!existsSync(path.join(dir, candidate))) {
      gap++;
      continue;
    }
    gap = 0;
    if (existsSync(path.join(dir, `${stemOf(candidate)}.result.csv`))) names.push(candidate);
  }
  return names;
}

/** Whether `candidate` holds the file's bytes (its size, then its sha256). */
async function sameBytes(candidate: string, file: FileRecord): Promise<boolean> {
  try {
    if (statSync(candidate).size !== file.size) return false;
    return (await hashPrefix(candidate, file.size)) === file.sha256;
  } catch {
    return false; // moved or removed meanwhile: not one to write beside
  }
}

function isFolder(dir: string): boolean {
  try {
    return statSync(dir).isDirectory();
  } catch {
    return false;
  }
}
