// The journal's tables as they are, read a page at a time: what `smsdrop migrate --to` copies into
// a PostgreSQL journal (src/pgjournal/copy.ts). Read-only once open: each page is a statement of
// its own by the table's primary key (keyset), so a million rows are read in flat memory and no
// statement stays open between pages.
import { existsSync } from 'node:fs';
import { SmsdropError } from '../errors.js';
import { replayIntents } from './intents.js';
import { MIGRATIONS } from './migrations.js';
import { connectionOf, type Journal } from './connection.js';
import { journalPath } from './paths.js';
import { openJournal } from './open.js';
import { appliedMigrations } from './reads.js';

/**
 * The tables copied, parents before the rows that refer to them (a batch's parent_id is an earlier
 * batch), and the primary key each is paged by. Not copied: SQLite's own bookkeeping
 * (schema_migrations, sqlite_sequence) and intents (put back into the journal before reading).
 */
export const DUMPED_TABLES = [
  ['files', ['id']],
  ['groups', ['id']],
  ['rows', ['id']],
  ['batches', ['id']],
  ['batch_numbers', ['batch_id']],
  ['attempts', ['id']],
  ['daemon_state', ['id']],
  ['suppressed', ['phone']],
  ['invalid_cells', ['row_id']],
  ['webhook_outbox', ['id']],
  ['pruned_totals', ['kind', 'outcome', 'code']],
] as const satisfies ReadonlyArray<readonly [string, readonly string[]]>;

export type DumpedTableName = (typeof DUMPED_TABLES)[number][0];

/** A table's values, row by row, in its columns' order; integers as bigint (exact past 2^53). */
export type DumpedRow = unknown[];

export interface DumpedTable {
  name: DumpedTableName;
  columns: string[];
  /** Its rows now (the caller holds the data directory's lock: nothing writes meanwhile). */
  count: number;
  /** Its rows in primary-key order, `size` at a time. */
  pages(size: number): Generator<DumpedRow[]>;
}

export interface TableDump {
  /** The file read. */
  file: string;
  tables(): DumpedTable[];
  close(): void;
}

/**
 * The journal of dataDir for reading whole, or undefined when there is none. The caller holds the
 * data directory's lock: the journal is first brought up to date as a writer would (missing
 * migrations applied, requests a crash cut off put back from their intents), then read only.
 */
export function openTableDump(dataDir: string): TableDump | undefined {
  const file = journalPath(dataDir);
  if (!existsSync(file)) return undefined;
  const writer = openJournal(file);
  try {
    replayIntents(writer);
  } finally {
    writer.close();
  }
  const db = openJournal(file, { readonly: true });
  const applied = appliedMigrations(db);
  if (!MIGRATIONS.every((m) => applied.has(m.version))) {
    db.close();
    throw new SmsdropError('E_INTERNAL', `the journal ${file} was not upgraded on opening`);
  }
  return {
    file,
    tables: () => DUMPED_TABLES.map(([name, key]) => dumpedTable(db, name, key)),
    close: () => db.close(),
  };
}

function dumpedTable(db: Journal, name: DumpedTableName, key: readonly string[]): DumpedTable {
  const columns = (connectionOf(db).pragma(`table_info(${name})`) as Array<{ name: string }>).map(
    (c) => c.name,
  );
  const count = connectionOf(db).prepare(`SELECT count(*) FROM ${name}`).pluck().get() as number;
  const keyAt = key.map((k) => columns.indexOf(k));
  const list = columns.map((c) => `"${c}"`).join(', ');
  const order = key.join(', ');
  const first = connectionOf(db).prepare(`SELECT ${list} FROM ${name} ORDER BY ${order} LIMIT ?`);
  const after = connectionOf(db).prepare(
    `SELECT ${list} FROM ${name} WHERE (${order}) > (${key.map(() => '?').join(', ')}) ORDER BY ${order} LIMIT ?`,
  );
  for (const statement of [first, after]) statement.raw(true).safeIntegers(true);
  return {
    name,
    columns,
    count,
    *pages(size) {
      let page = first.all(size) as DumpedRow[];
      while (page.length > 0) {
        yield page;
        if (page.length < size) return;
        const last = page[page.length - 1]!;
        page = after.all(...keyAt.map((i) => last[i]), size) as DumpedRow[];
      }
    },
  };
}
