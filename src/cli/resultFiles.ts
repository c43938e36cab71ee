// What `resume` and `retry` do for the file's result file once they have sent: write it again
// where `send` or the daemon put it (results/rewrite.ts), and what their summary says of it.
import type { Config } from '../config/index.js';
import type { FileRecord } from '../ports/index.js';
import type { Runtime } from '../pipeline/runtime.js';
import { resultPlacesOf, rewriteResults } from '../results/rewrite.js';

export interface ResultFilesNote {
  /** The result files written again. */
  written: string[];
  /** One line for the summary: where the results are, or when they will be. */
  line: string;
}

/** Writes the file's result files again from the journal (the runtime still open). */
export async function rewriteResultFiles(
  { journal, spools }: Pick<Runtime, 'journal' | 'spools'>,
  file: FileRecord,
  config: Config,
): Promise<ResultFilesNote> {
  const latest = (await journal.files.file(file.id)) ?? file;
  const places = await resultPlacesOf(latest, config.dataDir);
  const written = await rewriteResults(journal.reads, latest, places, spools);
  if (written.length > 0) return { written, line: `results    ${written.join(', ')}` };
  return {
    written,
    line: places.inProcessing
      ? 'results    the daemon writes its result file in done/ when it files it (at its next start)'
      : `results    no result file was written for it: smsdrop export ${file.id} writes its rows`,
  };
}
