// Where a data directory keeps its journal, and where a journal keeps its intents (intents.ts).
import path from 'node:path';

export function journalPath(dataDir: string): string {
  return path.join(dataDir, 'journal.sqlite');
}

/** The side file of a journal file. */
export function intentsPath(journalFile: string): string {
  return `${journalFile.replace(/\.sqlite$/, '')}.intents.sqlite`;
}
