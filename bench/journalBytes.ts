// `node --import tsx bench/journalBytes.ts [ROWS] [PERSONALISED] [--extras] [--database postgres]`:
// where a journal's bytes go. Generates the bench's CSV of ROWS rows (PERSONALISED: the share of
// rows with values of their own, 0 to 0.99; --extras adds two columns smsdrop keeps as extras: a
// customer number unique to the row and a shop name out of 40), sends it with `smsdrop send` to the
// simulator (separate processes, as a user runs them), then prints the bytes of each table and
// index, per row of the list: SQLite's from its dbstat table after a VACUUM INTO (so that free
// pages and the WAL do not count), PostgreSQL's from pg_relation_size after VACUUM FULL. Quote
// the numbers of one run on one machine. KEEP=1 leaves the work folder (list, journal) and prints
// it.
import { createReadStream, createWriteStream, mkdtempSync, rmSync, statSync } from 'node:fs';
import { once } from 'node:events';
import os from 'node:os';
import path from 'node:path';
import readline from 'node:readline';
import { parseArgs } from 'node:util';
import pg from 'pg';
import Database from '../src/journal/sqlite.js';
import { startPostgres } from '../test/pg/cluster.js';
import { generateCsv, SIMULATOR_TEMPLATES } from './generate.js';
import { childEnv, runSend, startSimulatorProcess } from './processes.js';

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: { extras: { type: 'boolean', default: false }, database: { type: 'string' } },
});
const ROWS = Number(positionals[0] ?? 100_000);
const PERSONALISED = Number(positionals[1] ?? 0.99);
const POSTGRES = values.database === 'postgres';
const CREDS = {
  accountSid: 'ACjournalbytes000000000000000001',
  authToken: 'journalbytestoken00000000000001',
  appId: 'APPjournalbytes00000000000000001',
};
const SHOPS = 40;

/** The bench's CSV with two extra columns appended to every line. */
async function withExtras(from: string, to: string): Promise<void> {
  const out = createWriteStream(to);
  let line = 0;
  for await (const text of readline.createInterface({ input: createReadStream(from) })) {
    const added = line === 0 ? '客户编号,门店' : `C${String(1_000_000 + line)},门店${line % SHOPS}`;
    if (!out.write(`${text},${added}\n`)) await once(out, 'drain');
    line++;
  }
  out.end();
  await once(out, 'finish');
}

interface Part {
  name: string;
  table: string;
  bytes: number;
}

function sqliteParts(journal: string, workDir: string): { parts: Part[]; file: number } {
  const copy = path.join(workDir, 'vacuumed.sqlite');
  const source = new Database(journal, { readonly: true });
  source.prepare('VACUUM INTO ?').run(copy);
  source.close();
  const db = new Database(copy, { readonly: true });
  const parts = db
    .prepare(
      `SELECT s.name, coalesce(m.tbl_name, s.name) AS "table", sum(s.pgsize) AS bytes
       FROM dbstat s LEFT JOIN sqlite_schema m ON m.name = s.name
       GROUP BY s.name ORDER BY bytes DESC`,
    )
    .all() as Part[];
  db.close();
  return { parts, file: statSync(copy).size };
}

async function postgresParts(url: string): Promise<{ parts: Part[]; file: number }> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    await client.query('VACUUM FULL');
    const parts = await client.query<{ name: string; table: string; bytes: string }>(
      `SELECT c.relname AS name, coalesce(t.relname, c.relname) AS "table",
         pg_total_relation_size(c.oid) - CASE WHEN c.relkind = 'r'
           THEN pg_indexes_size(c.oid) ELSE 0 END AS bytes
       FROM pg_class c
       JOIN pg_namespace n ON n.oid = c.relnamespace AND n.nspname = current_schema()
       LEFT JOIN pg_index i ON i.indexrelid = c.oid
       LEFT JOIN pg_class t ON t.oid = i.indrelid
       WHERE c.relkind IN ('r', 'i') ORDER BY bytes DESC`,
    );
    const total = await client.query<{ size: string }>(
      'SELECT pg_database_size(current_database()) AS size',
    );
    return {
      parts: parts.rows.map((r) => ({ ...r, bytes: Number(r.bytes) })),
      file: Number(total.rows[0]!.size),
    };
  } finally {
    await client.end();
  }
}

function print(parts: Part[], file: number, extra: Record<string, unknown>): void {
  const perRow = (n: number) => Math.round((n / ROWS) * 10) / 10;
  const byTable = new Map<string, number>();
  for (const p of parts) byTable.set(p.table, (byTable.get(p.table) ?? 0) + p.bytes);
  console.log(JSON.stringify({ rows: ROWS, personalised: PERSONALISED, ...extra }));
  console.log(`total ${file} bytes, ${perRow(file)} a row`);
  for (const [table, bytes] of [...byTable].sort((a, b) => b[1] - a[1])) {
    if (bytes < ROWS) continue;
    console.log(`  ${table.padEnd(20)} ${String(perRow(bytes)).padStart(7)} B a row`);
    for (const p of parts.filter((q) => q.table === table && q.bytes >= ROWS))
      console.log(`    ${p.name.padEnd(30)} ${String(perRow(p.bytes)).padStart(7)}`);
  }
}

const workDir = mkdtempSync(path.join(os.tmpdir(), 'smsdrop-journal-bytes-'));
const postgres = POSTGRES ? await startPostgres() : undefined;
try {
  const generated = path.join(workDir, 'generated.csv');
  const csv = path.join(workDir, 'list.csv');
  await generateCsv(values.extras ? generated : csv, ROWS, 1, PERSONALISED);
  if (values.extras) await withExtras(generated, csv);
  const dataDir = path.join(workDir, 'data');
  const url = postgres ? await postgres.freshDatabase() : undefined;
  const sim = await startSimulatorProcess(
    'src',
    childEnv(workDir, CREDS, {}),
    0,
    SIMULATOR_TEMPLATES,
  );
  try {
    const env = childEnv(workDir, CREDS, {
      SMSDROP_BASE_URL: sim.url,
      SMSDROP_DATA_DIR: dataDir,
      ...(url ? { SMSDROP_DATABASE_URL: url } : {}),
    });
    const run = await runSend('src', csv, env);
    const intents = statSync(path.join(dataDir, 'journal.intents.sqlite'), {
      throwIfNoEntry: false,
    });
    const { parts, file } = url
      ? await postgresParts(url)
      : sqliteParts(path.join(dataDir, 'journal.sqlite'), workDir);
    print(parts, file, {
      exitCode: run.exitCode,
      seconds: Math.round(run.seconds),
      csvBytes: statSync(csv).size,
      extras: values.extras,
      database: POSTGRES ? 'postgres' : 'sqlite',
      intentsFileBytes: intents?.size ?? 0,
    });
  } finally {
    await sim.stop();
  }
} finally {
  await postgres?.stop();
  if (!process.env.KEEP) rmSync(workDir, { recursive: true, force: true });
  else console.log(workDir);
}
