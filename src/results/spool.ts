// Result files written ahead, while their rows are still being sent, into spool/ in the data
// directory: when the last answer is in only the last pages are left (a million rows take ~2 s to
// write, which came after the last request).
import { copyFileSync, mkdirSync, readdirSync, renameSync, rmSync } from 'node:fs';
import path from 'node:path';
import { createCsvWriter } from '../csvio/index.js';
import type { ResultReads } from '../ports/results.js';
import { RESULT_FORMAT, RESULT_HEADER } from './format.js';

/**
 * The spools of one process (one per runtime, handed to whoever spools or writes result files):
 * the completed ones by file id, with what their batches looked like then; and the spool files
 * this process writes or keeps (any other in spool/ is left from an earlier process).
 */
export class ResultSpools {
  readonly #completed = new Map<number, { file: string; batches: string }>();
  readonly #inUse = new Set<string>();
  /** Where the spool files go: spool/ in the data directory. */
  readonly dir: string;

  constructor(dataDir: string) {
    this.dir = path.join(dataDir, 'spool');
  }

  /** Whether the file's result file was written ahead and waits to be moved into place. */
  pending(fileId: number): boolean {
    return this.#completed.has(fileId);
  }

  /** A spool file this process writes or keeps. */
  inUse(file: string): boolean {
    return this.#inUse.has(file);
  }

  /** The spool file of `fileId`, from now on written by this process. */
  claim(fileId: number): string {
    const file = path.join(this.dir, `result-${fileId}.csv.part`);
    this.#inUse.add(file);
    return file;
  }

  /** The spool file is complete, written when its batches were as `batches` says. */
  complete(fileId: number, file: string, batches: string): void {
    this.#completed.set(fileId, { file, batches });
  }

  /** The spool file is no longer kept (removed, or moved into place). */
  release(file: string): void {
    this.#inUse.delete(file);
  }

  /** The completed spool of the file, if any, no longer kept. */
  take(fileId: number): { file: string; batches: string } | undefined {
    const spool = this.#completed.get(fileId);
    if (!spool) return undefined;
    this.#completed.delete(fileId);
    this.#inUse.delete(spool.file);
    return spool;
  }
}

/**
 * A result file written while its rows are still being sent: each advance() writes the next
 * pages whose rows are all final, so that when the last answer is in only the last pages are
 * left. The lines are those writeResultCsv would write at the end: a page goes out only once none
 * of its lines can change.
 */
export interface ResultSpool {
  /**
   * Writes a few more pages, if their rows are final (a few ms at most): call it now and then while
   * sending.
   */
  advance: () => void;
  /**
   * Sending finished: writes the rest, and keeps the file for the next writeResultCsv of this file.
   */
  complete(): Promise<void>;
  /** Sending did not finish (paused, stopped, failed): the file is dropped. */
  discard(): Promise<void>;
}

/**
 * Time one advance() may take: pages (~1.5 ms each) are written until it is spent. An answer that
 * arrives meanwhile waits for it, so it is kept short and advance() is called often instead.
 */
const ADVANCE_MS = 2;

/**
 * Removes spool files a crash or a failed filing left behind (they are written again when needed).
 */
export function removeLeftovers(spools: ResultSpools): void {
  for (const name of readdirSync(spools.dir)) {
    const file = path.join(spools.dir, name);
    if (name.endsWith('.csv.part') && !spools.inUse(file)) rmSync(file, { force: true });
  }
}

/**
 * Starts writing the result file of `fileId` ahead, into spool/ in the data directory. Any error
 * (in starting it or in writing a page) drops the spool: writeResultCsv then writes the file from
 * the journal, as without one, and reports what goes wrong then.
 */
export function spoolResults(
  spools: ResultSpools,
  reads: ResultReads,
  fileId: number,
): ResultSpool {
  const { file, writer, cursor } = startSpool(spools, reads, fileId);
  let open = true;
  /** Final pages a store answers later (a promise) are being looked for: advance() waits. */
  let looking: Promise<void> | undefined;
  const close = async (): Promise<void> => {
    if (!open) return;
    open = false;
    try {
      cursor.close();
    } finally {
      await writer.close();
    }
  };
  const discard = async (): Promise<void> => {
    await close().catch(() => {});
    rmSync(file, { force: true });
    spools.release(file);
  };
  const writePages = (pages: readonly string[]) => pages.forEach((p) => writer.writeText(p));
  return {
    advance: () => {
      if (!open || looking) return;
      try {
        const pages = cursor.finalPages(performance.now() + ADVANCE_MS);
        if (Array.isArray(pages)) writePages(pages);
        else
          looking = pages
            .then(writePages)
            .catch(discard)
            .finally(() => (looking = undefined));
      } catch {
        void discard(); // a full disk, say (it runs from a timer: nothing may escape)
      }
    },
    complete: async () => {
      await looking?.catch(() => {});
      if (!open) return;
      try {
        // Taken first: a batch that changed while the pages were read makes the stamp stale, and
        // the spool is then not used.
        const batches = await reads.resultsStamp(fileId);
        for await (const pages of cursor.restPages()) writePages(pages);
        await close();
        spools.complete(fileId, file, batches);
      } catch {
        await discard();
      }
    },
    discard: async () => {
      await looking?.catch(() => {});
      await discard();
    },
  };
}

/** The spool file of `fileId`, its writer and the cursor of its pages (none left on an error). */
function startSpool(spools: ResultSpools, reads: ResultReads, fileId: number) {
  spools.take(fileId); // a completed spool not taken is no longer kept
  mkdirSync(spools.dir, { recursive: true });
  removeLeftovers(spools);
  const file = spools.claim(fileId);
  const writer = createCsvWriter(file, RESULT_HEADER);
  try {
    return { file, writer, cursor: reads.resultPages(fileId, RESULT_FORMAT) };
  } catch (err) {
    void writer.close().catch(() => {});
    rmSync(file, { force: true });
    spools.release(file);
    throw err;
  }
}

/** The completed spool of the file, if its batches have not changed since (else it is dropped). */
export async function takeSpooled(
  spools: ResultSpools,
  reads: ResultReads,
  fileId: number,
): Promise<string | undefined> {
  const spool = spools.take(fileId);
  if (!spool) return undefined;
  if (spool.batches === (await reads.resultsStamp(fileId))) return spool.file;
  rmSync(spool.file, { force: true });
  return undefined;
}

/** Moves a spooled file into place (copies it across file systems); false if that failed. */
export function moveInto(from: string, to: string): boolean {
  try {
    try {
      renameSync(from, to);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EXDEV') throw err;
      copyFileSync(from, to);
    }
    return true;
  } catch {
    return false; // written again from the journal, where a real problem shows itself
  } finally {
    rmSync(from, { force: true });
  }
}
