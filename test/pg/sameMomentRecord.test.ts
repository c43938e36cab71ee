// The same bytes given to two nodes at the same moment are one file: a node that looked them up
// before the other recorded them, and records them after, finds that record and waits for the
// node reading it, instead of making a second generation it would read and close as duplicates.
// The moment is made exact with a trigger: node B's insert of the record waits (on an advisory
// lock the test holds) while the test commits node A's record and claim, then goes on.
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { after, describe, test } from 'node:test';
import type pg from 'pg';
import { loadConfig } from '../../src/config/index.js';
import { prepareFolders } from '../../src/daemon/folders.js';
import { silentLogger } from '../../src/log/logger.js';
import { pgFileStore } from '../../src/pgjournal/files.js';
import { migratePostgres, openPool } from '../../src/pgjournal/schema.js';
import { processFile } from '../../src/pipeline/index.js';
import { openRuntime } from '../../src/pipeline/runtime.js';
import { contactsCsv, tempDir } from '../daemon/helpers.js';
import { postgresMissing, usePostgres } from './cluster.js';

const GATE = 5151;

/** An insert of a record that is not node A's waits at the gate (an advisory lock). */
const AT_THE_GATE = `
  CREATE FUNCTION at_the_gate() RETURNS trigger LANGUAGE plpgsql AS $$
  BEGIN
    IF NEW.path NOT LIKE '/a/%' THEN PERFORM pg_advisory_xact_lock_shared(${GATE}); END IF;
    RETURN NEW;
  END $$;
  CREATE TRIGGER at_the_gate BEFORE INSERT ON files FOR EACH ROW EXECUTE FUNCTION at_the_gate();`;

/** Once node B's insert waits at the gate: node A's record and claim, committed; the gate opens. */
async function aCommitsFirst(
  gate: pg.PoolClient,
  sql: pg.Pool,
  bytes: { sha256: string; size: number },
): Promise<void> {
  for (const deadline = Date.now() + 60_000; ; await sleep(20)) {
    const { rows } = await sql.query<{ n: number }>(
      "SELECT count(*)::int AS n FROM pg_locks WHERE locktype = 'advisory' AND NOT granted",
    );
    if (rows[0]!.n > 0) break;
    assert.ok(Date.now() < deadline, "node B's insert never reached the gate");
  }
  await gate.query(
    `WITH a AS (INSERT INTO files (sha256, generation, name, path, size, encoding, status, created_at, started_at)
       SELECT sha256, 1, name, '/a/processing/' || name, size, encoding, 'intake', now()::text, now()::text
       FROM (SELECT $1::text AS sha256, 'list.csv' AS name, $2::bigint AS size, 'utf-8' AS encoding) x
       RETURNING id)
     INSERT INTO file_readers (file_id, node, until)
     SELECT id, 'node-a', clock_timestamp() + interval '1 hour' FROM a`,
    [bytes.sha256, bytes.size],
  );
  await gate.query('SELECT pg_advisory_unlock($1)', [GATE]);
}

describe('the same bytes recorded by two nodes at once', { skip: postgresMissing() }, () => {
  const pg15 = usePostgres();

  async function journal() {
    const url = await pg15.cluster.freshDatabase();
    const sql = openPool(url, 2);
    sql.on('error', () => undefined);
    after(() => sql.end());
    await migratePostgres(sql);
    return { url, sql };
  }

  test('the file store: the second record is not made', async () => {
    const { sql } = await journal();
    const a = pgFileStore(sql, { reader: { node: 'node-a', leaseMs: 60_000 } });
    const b = pgFileStore(sql, { reader: { node: 'node-b', leaseMs: 60_000 } });
    const bytes = { sha256: 'e'.repeat(64), size: 10, encoding: 'utf-8' };
    assert.equal(await a.identify(bytes.sha256), undefined);
    assert.equal(await b.identify(bytes.sha256), undefined, 'both looked before either recorded');
    const [madeA, madeB] = await Promise.all([
      a.createUnlessRecorded({ ...bytes, name: 'x.csv', path: '/a/processing/x.csv' }, 0),
      b.createUnlessRecorded({ ...bytes, name: 'x.csv', path: '/b/processing/x.csv' }, 0),
    ]);
    assert.equal([madeA, madeB].filter(Boolean).length, 1, 'one of the two made it');
    const { rows } = await sql.query<{ n: number }>('SELECT count(*)::int AS n FROM files');
    assert.equal(rows[0]!.n, 1);
  });

  test("the pipeline: node B waits for node A's file, no second generation", async () => {
    const { url, sql } = await journal();
    await sql.query(AT_THE_GATE);
    const dir = tempDir('pg-same-moment');
    after(() => fs.rmSync(dir, { recursive: true, force: true }));
    const config = loadConfig({
      env: {
        SMSDROP_DATA_DIR: prepareFolders(path.join(dir, 'data')).root,
        SMSDROP_DATABASE_URL: url,
        SMSDROP_NODE_ID: 'node-b',
      },
      configDir: dir,
    });
    const runtime = await openRuntime(config, { role: 'test', log: silentLogger() });
    after(() => runtime.close());
    const file = path.join(dir, 'list.csv');
    const csv = Buffer.from(contactsCsv(20));
    fs.writeFileSync(file, csv);
    const gate = await sql.connect();
    await gate.query('SELECT pg_advisory_lock($1)', [GATE]);
    const run = processFile(runtime.context, file);
    const sha256 = createHash('sha256').update(csv).digest('hex');
    await aCommitsFirst(gate, sql, { sha256, size: csv.length }).finally(() => gate.release());
    const result = await run;
    assert.equal(result.outcome, 'elsewhere', result.reason);
    assert.match(result.reason ?? '', /node node-a is reading and sending it/);
    const { rows } = await sql.query<{ generation: number; path: string; rows: number }>(
      'SELECT generation, path, rows FROM files',
    );
    assert.deepEqual(rows, [{ generation: 1, path: '/a/processing/list.csv', rows: 0 }]);
  });
});
