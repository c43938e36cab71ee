// The views the docs tell users to query are the report interface of both journals: each view a
// document names (README.md, docs/*.md) exists on a fresh SQLite journal and on a fresh
// PostgreSQL one, with the same columns in the same order, and the column lists docs/operations.md
// gives for them (and for the `suppressed` table) name every column, in order.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, describe, test } from 'node:test';
import type pg from 'pg';
import type { Journal } from '../../src/journal/connection.js';
import { openJournal } from '../../src/journal/open.js';
import { migratePostgres } from '../../src/pgjournal/schema.js';
import { sqliteOf } from '../journal/sqliteOf.js';
import { postgresMissing, usePostgres } from './cluster.js';

const ROOT = path.join(import.meta.dirname, '..', '..');
const DOCS = [
  'README.md',
  ...fs
    .readdirSync(path.join(ROOT, 'docs'))
    .flatMap((f) => (f.endsWith('.md') ? [`docs/${f}`] : [])),
];
/** The documents' list of what to query: "- `name`: ... `column`, `column` ..." bullets. */
const COLUMN_LISTS = 'docs/operations.md';

function read(file: string): string {
  return fs.readFileSync(path.join(ROOT, file), 'utf8');
}

/** Every `name` written in backquotes, in the order written. */
function quoted(text: string): string[] {
  return [...text.matchAll(/`([a-z_][a-z0-9_]*)`/g)].map((m) => m[1]!);
}

/** In COLUMN_LISTS, the names each bullet opening with `relation` quotes after its colon. */
function documentedColumns(relation: string): string[] | undefined {
  const bullet = new RegExp(`^- \`${relation}\`:(.*?)(?=^- |^\\s*$)`, 'ms').exec(
    read(COLUMN_LISTS),
  );
  return bullet ? quoted(bullet[1]!) : undefined;
}

function sqliteJournal(): Journal {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'documented-views-'));
  const journal = openJournal(path.join(dir, 'journal.sqlite'));
  after(() => {
    journal.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });
  return journal;
}

function sqliteNames(journal: Journal, type: 'view' | 'table'): string[] {
  const rows = sqliteOf(journal)
    .prepare('SELECT name FROM sqlite_master WHERE type = ? ORDER BY name')
    .all(type) as { name: string }[];
  return rows.map((r) => r.name);
}

function sqliteColumns(journal: Journal, relation: string): string[] {
  const rows = sqliteOf(journal).pragma(`table_info(${relation})`) as { name: string }[];
  return rows.map((c) => c.name);
}

async function pgViews(pool: pg.Pool): Promise<string[]> {
  const { rows } = await pool.query<{ name: string }>(
    "SELECT table_name AS name FROM information_schema.views WHERE table_schema = 'public' ORDER BY 1",
  );
  return rows.map((r) => r.name);
}

async function pgColumns(pool: pg.Pool, relation: string): Promise<string[]> {
  const { rows } = await pool.query<{ name: string }>(
    `SELECT column_name AS name FROM information_schema.columns
     WHERE table_schema = 'public' AND table_name = $1 ORDER BY ordinal_position`,
    [relation],
  );
  return rows.map((r) => r.name);
}

/** `actual` appears in `written` in order, each once (other quoted words may come between). */
function inOrder(written: string[], actual: string[]): boolean {
  let at = 0;
  for (const word of written) if (word === actual[at]) at++;
  return at === actual.length;
}

describe('the documented views on both journals', { skip: postgresMissing() }, () => {
  const pg15 = usePostgres();

  test('each view the docs name has the same columns, in the same order, on SQLite and PostgreSQL', async () => {
    const journal = sqliteJournal();
    const pool = pg15.cluster.pool(await pg15.cluster.freshDatabase());
    await migratePostgres(pool);
    const sqliteViews = sqliteNames(journal, 'view');
    const postgresViews = await pgViews(pool);
    const named = new Set(DOCS.flatMap((file) => quoted(read(file))));
    const documented = [...new Set([...sqliteViews, ...postgresViews])].filter((v) => named.has(v));
    for (const view of ['v_files', 'v_recipients', 'v_failures', 'row_results'])
      assert.ok(documented.includes(view), `the docs name ${view}`);
    for (const view of documented) {
      assert.ok(sqliteViews.includes(view), `SQLite has the view ${view}`);
      assert.ok(postgresViews.includes(view), `PostgreSQL has the view ${view}`);
      const columns = sqliteColumns(journal, view);
      assert.deepEqual(await pgColumns(pool, view), columns, `${view}'s columns`);
    }
  });

  test(`${COLUMN_LISTS} lists every column of what it tells users to query, in order`, async () => {
    const journal = sqliteJournal();
    const pool = pg15.cluster.pool(await pg15.cluster.freshDatabase());
    await migratePostgres(pool);
    const relations = [...sqliteNames(journal, 'view'), 'suppressed'];
    const listed = relations.filter((r) => documentedColumns(r) !== undefined);
    assert.ok(listed.length >= 4, `${COLUMN_LISTS} lists ${listed.join(', ')}`);
    for (const relation of listed) {
      const written = documentedColumns(relation)!;
      const columns = sqliteColumns(journal, relation);
      assert.deepEqual(await pgColumns(pool, relation), columns, `${relation}'s columns`);
      assert.ok(
        inOrder(written, columns),
        `${COLUMN_LISTS} lists ${relation} as ${written.join(', ')}; it has ${columns.join(', ')}`,
      );
    }
  });
});
