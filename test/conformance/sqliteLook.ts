// Plain statements on the SQLite journal of a data directory, for a test outside the journal's own
// folder that seeds or reads rows no port shows: what the CLI or the daemon wrote, a documented
// view as a user queries it (`sqlite3 -readonly data/journal.sqlite`), the SQLite side of a
// comparison with the PostgreSQL journal on the same content. The stores themselves are opened
// through src/journals/; this is the tests' one other bridge into src/journal/, beside the
// conformance subjects (journals.ts), and its statements run as the journal's rules run theirs
// (`?` parameters).
import { journalPath } from '../../src/journals/index.js';
import { openJournal } from '../../src/journal/open.js';
import { runRule } from '../../src/journal/rules.js';
import { all, get, type Param, run } from '../../src/journalRules/rule.js';

export interface SqliteLook {
  /** The journal's file. */
  file: string;
  /** A statement that writes; the rows it changed. */
  run(text: string, ...params: Param[]): number;
  all<R = Record<string, unknown>>(text: string, ...params: Param[]): R[];
  get<R = Record<string, unknown>>(text: string, ...params: Param[]): R | undefined;
  close(): void;
}

/**
 * A connection of its own to dataDir's journal: read-only, as users are told to read it, or
 * writable, opened as smsdrop opens it (made and brought up to date when it is not).
 */
export function lookIntoSqlite(dataDir: string, options: { readonly?: boolean } = {}): SqliteLook {
  const file = journalPath(dataDir);
  const db = openJournal(file, { readonly: options.readonly ?? false });
  return {
    file,
    run: (text, ...params) => runRule(db, run(text, ...params)),
    all: <R>(text: string, ...params: Param[]) => runRule(db, all<R>(text, ...params)),
    get: <R>(text: string, ...params: Param[]) => runRule(db, get<R>(text, ...params)),
    close: () => db.close(),
  };
}
