// Intake rows/s into a PostgreSQL journal against the SQLite journal on the same file, through the
// ports as the pipeline drives them (test/pg/intakeRun.ts): no sending, no daemon. PostgreSQL is a
// throwaway local cluster (test/pg/cluster.ts: fsync off, each commit still written before it
// returns); the SQLite journal is a fresh one with synchronous=normal. The journals take turns,
// `repeat` runs each; the fastest counts (noise on a shared machine only slows a run down).
// `npm run bench -- --database postgres` calls it; alone:
// `node --import tsx bench/pgIntake.ts [ROWS]` (200,000 rows of generate.ts's file by default).
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { openWriter } from '../src/journal/index.js';
import { pgFileStore } from '../src/pgjournal/files.js';
import { migratePostgres, openPool } from '../src/pgjournal/schema.js';
import { type Postgres, startPostgres } from '../test/pg/cluster.js';
import { intakeFile } from '../test/pg/intakeRun.js';
import { generateCsv } from './generate.js';

export interface IntakeRate {
  rows: number;
  /** Seconds of every run, in the order they ran. */
  runsSeconds: number[];
  bestSeconds: number;
  rowsPerSec: number;
  /** Load average (1 min) before the first run and after the last. */
  load: [number, number];
}

async function sqliteRun(csv: string, workDir: string): Promise<number> {
  const data = fs.mkdtempSync(path.join(workDir, 'sqlite-'));
  const { handle } = openWriter(data, {
    role: 'bench',
    synchronous: 'normal',
    reqIdOn: true,
    onLost: () => undefined,
  });
  try {
    const start = performance.now();
    await intakeFile(csv, { files: handle.files });
    return performance.now() - start;
  } finally {
    await handle.close();
    fs.rmSync(data, { recursive: true, force: true });
  }
}

async function pgRun(csv: string, cluster: Postgres): Promise<number> {
  const pool = openPool(await cluster.freshDatabase(), 4);
  try {
    await migratePostgres(pool);
    const start = performance.now();
    await intakeFile(csv, { files: pgFileStore(pool) });
    return performance.now() - start;
  } finally {
    await pool.end();
  }
}

function rateOf(rows: number, ms: number[], load: [number, number]): IntakeRate {
  const best = Math.min(...ms);
  return {
    rows,
    runsSeconds: ms.map((t) => Number((t / 1000).toFixed(3))),
    bestSeconds: Number((best / 1000).toFixed(3)),
    rowsPerSec: Math.round(rows / (best / 1000)),
    load,
  };
}

/** The two journals' intake of `csv` (`rows` data rows), alternating, `repeat` runs each. */
export async function measureIntakePair(
  csv: string,
  rows: number,
  cluster: Postgres,
  workDir: string,
  repeat: number,
): Promise<{ sqlite: IntakeRate; postgres: IntakeRate }> {
  const times = { sqlite: [] as number[], postgres: [] as number[] };
  const loadStart = os.loadavg()[0]!;
  for (let round = 0; round < repeat; round++) {
    times.sqlite.push(await sqliteRun(csv, workDir));
    times.postgres.push(await pgRun(csv, cluster));
  }
  const load: [number, number] = [loadStart, os.loadavg()[0]!];
  return { sqlite: rateOf(rows, times.sqlite, load), postgres: rateOf(rows, times.postgres, load) };
}

async function main(): Promise<void> {
  const rows = Number(process.argv[2] ?? 200_000);
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'smsdrop-pg-intake-bench-'));
  const csv = path.join(dir, 'bench.csv');
  await generateCsv(csv, rows, 1);
  const cluster = await startPostgres();
  try {
    const rates = await measureIntakePair(csv, rows, cluster, dir, 2);
    for (const [journal, r] of Object.entries(rates))
      process.stdout.write(
        `${journal}: ${rows} rows, best ${r.bestSeconds.toFixed(2)} s (${r.runsSeconds.map((t) => t.toFixed(2)).join(', ')}), ${r.rowsPerSec} rows/s\n`,
      );
  } finally {
    await cluster.stop();
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

if (process.argv[1] && path.resolve(process.argv[1]) === path.resolve(import.meta.filename))
  await main();
