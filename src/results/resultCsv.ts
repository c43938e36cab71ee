// NAME.result.csv: one line per input row, with its final status. Excel-safe (see csvio); digits
// Excel would change (the status code 000000, a date 20260101120000, a number 0044…) are written
// as ="digits", as export writes them (csvio's guardDigits): Excel shows them as they are.
import { renameSync, rmSync } from 'node:fs';
import path from 'node:path';
import { createCsvWriter } from '../csvio/index.js';
import type { ResultReads } from '../ports/results.js';
import { RESULT_FORMAT, RESULT_HEADER } from './format.js';
import { type ResultSpools, takeSpooled, moveInto } from './spool.js';

export { RESULT_FORMAT, RESULT_HEADER } from './format.js';

/**
 * Writes NAME.result.csv into outDir; returns its path. When the run that just finished the file
 * wrote its lines ahead (see spoolResults), that file is moved into place instead. Written beside
 * it first and renamed over it: whoever opens the file meanwhile (Excel, a script) reads the old
 * one or the new one whole, never half of one.
 */
export async function writeResultCsv(
  reads: ResultReads,
  fileId: number,
  outDir: string,
  baseName: string,
  spools?: ResultSpools,
): Promise<string> {
  const file = path.join(outDir, `${baseName}.result.csv`);
  const spooled = spools && (await takeSpooled(spools, reads, fileId));
  if (spooled !== undefined && moveInto(spooled, file)) return file;
  // Hidden, and named for this process: two writers of one result file never share a partial one.
  const partial = path.join(outDir, `.${baseName}.result.csv.${process.pid}.part`);
  try {
    const writer = createCsvWriter(partial, RESULT_HEADER);
    const cursor = reads.resultPages(fileId, RESULT_FORMAT);
    try {
      for await (const pages of cursor.restPages())
        for (const page of pages) writer.writeText(page);
    } finally {
      cursor.close();
      await writer.close();
    }
    renameSync(partial, file);
  } finally {
    rmSync(partial, { force: true });
  }
  return file;
}
