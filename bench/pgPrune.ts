// `node --import tsx bench/pgPrune.ts [ROWS]`: how long `prune` takes on a PostgreSQL journal, with
// and without the indexes on the foreign keys it checks (migration 12: rows_by_group,
// batches_by_parent). The journal holds two files of ROWS rows each (generate.ts, 50,000 by
// default), read through the ports (test/pg/intakeRun.ts), every batch accepted after one attempt;
// the first file ended long ago and is pruned, the second stays. The journal is made once and
// copied (CREATE DATABASE … TEMPLATE) for each run; the runs alternate, twice each.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { pgFileStore } from '../src/pgjournal/files.js';
import { pgMaintenance } from '../src/pgjournal/prune.js';
import { migratePostgres, openPool } from '../src/pgjournal/schema.js';
import { startPostgres } from '../test/pg/cluster.js';
import { intakeFile } from '../test/pg/intakeRun.js';
import { generateCsv } from './generate.js';

const rows = Number(process.argv[2] ?? 50_000);
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'smsdrop-pg-prune-bench-'));
const cluster = await startPostgres();

/** Every batch of the file accepted after one attempt, the file done `finishedAt`. */
const SETTLE = [
  `INSERT INTO attempts (batch_id, req_id, started_at, finished_at, outcome, status_code)
     SELECT id, '', $2, $2, 'accepted', '000000' FROM batches WHERE file_id = $1`,
  "UPDATE batches SET state = 'accepted', status_code = '000000', updated_at = $2 WHERE file_id = $1",
  "UPDATE files SET status = 'done', finished_at = $2 WHERE id = $1",
];

async function admin(sql: string): Promise<void> {
  const client = new pg.Client({ connectionString: cluster.url });
  await client.connect();
  try {
    await client.query(sql);
  } finally {
    await client.end();
  }
}

async function makeJournal(): Promise<string> {
  const url = await cluster.freshDatabase();
  const pool = openPool(url, 4);
  await migratePostgres(pool);
  for (const [seed, finishedAt] of [
    [1, '2000-01-01T00:00:00.000Z'],
    [2, new Date().toISOString()],
  ] as const) {
    const csv = path.join(dir, `file${seed}.csv`);
    await generateCsv(csv, rows, seed);
    const { fileId } = await intakeFile(csv, { files: pgFileStore(pool) });
    for (const sql of SETTLE) await pool.query(sql, [fileId, finishedAt]);
  }
  const { rows: counts } = await pool.query<{ rows: number; groups: number; batches: number }>(
    'SELECT (SELECT count(*) FROM rows) AS rows, (SELECT count(*) FROM groups) AS groups, (SELECT count(*) FROM batches) AS batches',
  );
  process.stdout.write(`journal: ${JSON.stringify(counts[0])}\n`);
  await pool.query('VACUUM ANALYZE');
  await pool.end();
  return new URL(url).pathname.slice(1);
}

let copies = 0;
async function pruneCopy(template: string, withIndexes: boolean): Promise<number> {
  const name = `prune_${++copies}`;
  await admin(`CREATE DATABASE ${name} TEMPLATE ${template} STRATEGY file_copy`);
  const pool = openPool(cluster.url.replace(/\/postgres$/, `/${name}`), 4);
  try {
    if (!withIndexes) await pool.query('DROP INDEX rows_by_group, batches_by_parent');
    const start = performance.now();
    const result = await pgMaintenance(pool).prune(
      { endedBefore: '2001-01-01T00:00:00.000Z' },
      new Set(),
    );
    const ms = performance.now() - start;
    if (result.files.length !== 1) throw new Error(`pruned ${result.files.length} files, not 1`);
    return ms;
  } finally {
    await pool.end();
  }
}

try {
  const template = await makeJournal();
  const times = { without: [] as number[], with: [] as number[] };
  for (let round = 0; round < 2; round++) {
    times.without.push(await pruneCopy(template, false));
    times.with.push(await pruneCopy(template, true));
  }
  for (const [variant, ms] of Object.entries(times))
    process.stdout.write(
      `prune ${variant} the indexes: ${ms.map((t) => (t / 1000).toFixed(2)).join(' s, ')} s\n`,
    );
} finally {
  await cluster.stop();
  fs.rmSync(dir, { recursive: true, force: true });
}
