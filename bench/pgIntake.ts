// `node --import tsx bench/pgIntake.ts [ROWS]`: intake rows/s into a PostgreSQL journal against the
// SQLite journal on the same generated file (generate.ts, 200,000 rows by default), through the
// ports as the pipeline drives them (test/pg/intakeRun.ts). PostgreSQL is a throwaway local
// cluster (test/pg/cluster.ts: fsync and synchronous_commit off); the SQLite journal is a fresh
// one with synchronous=normal. Each journal is timed twice, alternating; the best run is printed.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { openWriter } from '../src/journal/index.js';
import { pgFileStore } from '../src/pgjournal/files.js';
import { migratePostgres, openPool } from '../src/pgjournal/schema.js';
import { startPostgres } from '../test/pg/cluster.js';
import { intakeFile } from '../test/pg/intakeRun.js';
import { generateCsv } from './generate.js';

const rows = Number(process.argv[2] ?? 200_000);
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'smsdrop-pg-intake-bench-'));
const csv = path.join(dir, 'bench.csv');
await generateCsv(csv, rows, 1);
const cluster = await startPostgres();

async function sqliteRun(): Promise<number> {
  const data = fs.mkdtempSync(path.join(dir, 'data-'));
  const { handle } = openWriter(data, {
    role: 'bench',
    synchronous: 'normal',
    reqIdOn: true,
    onLost: () => undefined,
  });
  const start = performance.now();
  await intakeFile(csv, { files: handle.files });
  const ms = performance.now() - start;
  await handle.close();
  return ms;
}

async function pgRun(): Promise<number> {
  const pool = openPool(await cluster.freshDatabase(), 4);
  await migratePostgres(pool);
  const start = performance.now();
  await intakeFile(csv, { files: pgFileStore(pool) });
  const ms = performance.now() - start;
  await pool.end();
  return ms;
}

try {
  const times = { sqlite: [] as number[], postgres: [] as number[] };
  for (let round = 0; round < 2; round++) {
    times.sqlite.push(await sqliteRun());
    times.postgres.push(await pgRun());
  }
  for (const [journal, ms] of Object.entries(times)) {
    const best = Math.min(...ms);
    process.stdout.write(
      `${journal}: ${rows} rows, best ${(best / 1000).toFixed(2)} s (${ms.map((t) => (t / 1000).toFixed(2)).join(', ')}), ${Math.round(rows / (best / 1000))} rows/s\n`,
    );
  }
} finally {
  await cluster.stop();
  fs.rmSync(dir, { recursive: true, force: true });
}
