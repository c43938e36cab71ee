// The README's queries of the journal, run as the README says: on a PostgreSQL journal through
// `psql` opened read-only with the README's own PGOPTIONS, on SQLite through `sqlite3 -readonly`.
// The same file sent to each journal by the real CLI gives the same rows to the same queries, and
// the psql session the README opens cannot write.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { after, describe, test } from 'node:test';
import { smsdrop } from '../cli/helpers.js';
import { REPO, tempDir } from '../daemon/helpers.js';
import { postgresBinDir, postgresMissing, usePostgres } from './cluster.js';

const readme = fs.readFileSync(path.join(REPO, 'README.md'), 'utf8');
const reports = readme.slice(readme.indexOf('\n## Reports'), readme.indexOf('\n## Settings'));

/** The README's psql command: `PGOPTIONS='…' psql "$SMSDROP_DATABASE_URL"`. */
function readmePgOptions(): string {
  const found = /`PGOPTIONS='([^']+)' psql "\$SMSDROP_DATABASE_URL"`/.exec(reports);
  assert.ok(found, 'the Reports section says how to open psql on the journal');
  return found[1]!;
}

function readmeQueries(): string[] {
  const block = /```sql\n([\s\S]*?)```/.exec(reports);
  assert.ok(block, 'the Reports section has an sql block');
  const queries = block[1]!.split('\n').filter((l) => /^SELECT /.test(l));
  assert.ok(queries.length >= 2, block[1]);
  return queries;
}

function psql(url: string, sql: string, pgOptions: string) {
  const bin = path.join(postgresBinDir()!, 'psql');
  return spawnSync(bin, ['-X', '-A', '-t', '-v', 'ON_ERROR_STOP=1', '-c', sql, url], {
    encoding: 'utf8',
    env: { PATH: process.env.PATH, PGOPTIONS: pgOptions },
  });
}

const sqlite3Missing = spawnSync('sqlite3', ['-version']).status !== 0 && 'no sqlite3 shell';

describe("the README's journal queries", { skip: postgresMissing() || sqlite3Missing }, () => {
  const pg15 = usePostgres();
  const dirs: string[] = [];
  after(() => dirs.forEach((d) => fs.rmSync(d, { recursive: true, force: true })));

  test('give the same rows through psql as through sqlite3, and psql opened so cannot write', async () => {
    const work = tempDir('readme-queries');
    dirs.push(work);
    const csv = path.join(work, 'contacts.csv');
    fs.writeFileSync(
      csv,
      'phone,templateId,data1,data2\n13800138000,1,482913,5\n12345,1,1,5\n13900139001,1,730264,5\n',
    );
    const url = await pg15.cluster.freshDatabase();
    const sqliteDir = path.join(work, 'sqlite-data');
    for (const env of [
      { SMSDROP_DATA_DIR: sqliteDir } as Record<string, string>,
      { SMSDROP_DATA_DIR: path.join(work, 'pg-data'), SMSDROP_DATABASE_URL: url },
    ]) {
      const sent = await smsdrop(['send', csv], env);
      assert.equal(sent.status, 3, `one invalid row: exit 3\n${sent.stdout}${sent.stderr}`);
    }

    const pgOptions = readmePgOptions();
    for (const sql of readmeQueries()) {
      const onPg = psql(url, sql, pgOptions);
      assert.equal(onPg.status, 0, `${sql}\n${onPg.stderr}`);
      const onSqlite = spawnSync(
        'sqlite3',
        ['-readonly', path.join(sqliteDir, 'journal.sqlite'), sql],
        { encoding: 'utf8' },
      );
      assert.equal(onSqlite.status, 0, `${sql}\n${onSqlite.stderr}`);
      assert.notEqual(onPg.stdout.trim(), '', `${sql}: rows on PostgreSQL`);
      assert.equal(onPg.stdout.trim(), onSqlite.stdout.trim(), sql);
    }

    const write = psql(url, "DELETE FROM suppressed WHERE phone = '13800138000'", pgOptions);
    assert.notEqual(write.status, 0, 'the README opens psql read-only');
    assert.match(write.stderr, /read-only transaction/);
  });
});
