// The journal's tables as they are, read a page at a time (ports/tableDump.ts): what `smsdrop
// migrate --to` copies into a PostgreSQL journal (src/pgjournal/copy.ts). Read-only once open:
// each page is a statement of its own by the table's primary key (keyset), so a million rows are
// read in flat memory and no statement stays open between pages.
import { existsSync } from 'node:fs';
import { SmsdropError } from '../errors.js';
import { replayIntents } from './intents.js';
import { MIGRATIONS } from './migrations.js';
import { connectionOf, type Journal } from './connection.js';
import { journalPath } from './paths.js';
import { openJournal } from './open.js';
import { appliedMigrations } from './reportReads.js';
import { readableColumn, readColumns, tableSource } from './storedForms.js';
import {
  DUMPED_TABLES,
  type DumpedRow,
  type DumpedTable,
  type DumpedTableName,
  type TableDump,
} from '../ports/tableDump.js';

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
  const columns = readColumns(
    name,
    (connectionOf(db).pragma(`table_info(${name})`) as Array<{ name: string }>).map((c) => c.name),
  );
  const source = tableSource(name);
  const count = connectionOf(db).prepare(`SELECT count(*) FROM ${source}`).pluck().get() as number;
  const keyAt = key.map((k) => columns.indexOf(k));
  const list = columns.map((c) => readableColumn(name, c)).join(', ');
  const order = key.join(', ');
  const first = connectionOf(db).prepare(`SELECT ${list} FROM ${source} ORDER BY ${order} LIMIT ?`);
  const after = connectionOf(db).prepare(
    `SELECT ${list} FROM ${source} WHERE (${order}) > (${key.map(() => '?').join(', ')}) ORDER BY ${order} LIMIT ?`,
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
