// Plain SQL on the journal of a data directory or a database smsdrop's child processes wrote, as
// an operator's sqlite3 or psql reads it: the attempts' start times and the views a test of an
// operator's control (approve, pause, cancel) checks beside what the CLI says.
import pg from 'pg';
import { withSqliteFile } from '../sqliteFile.js';

/** The rows `text` (SQL both journals read, no parameters) selects from the journal `env` names. */
export async function journalRows<R = Record<string, unknown>>(
  env: Record<string, string>,
  text: string,
): Promise<R[]> {
  const url = env.SMSDROP_DATABASE_URL;
  if (url === undefined)
    return withSqliteFile(env.SMSDROP_DATA_DIR!, (db) => db.prepare(text).all() as R[]);
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query(text)).rows as R[];
  } finally {
    await client.end();
  }
}

/** When each request of the file named `name` started (ms), in order. */
export async function attemptStarts(env: Record<string, string>, name: string): Promise<number[]> {
  const rows = await journalRows<{ started_at: string | Date }>(
    env,
    `SELECT a.started_at FROM attempts a JOIN batches b ON b.id = a.batch_id
       JOIN files f ON f.id = b.file_id WHERE f.name = '${name}' ORDER BY a.started_at`,
  );
  return rows.map((r) => new Date(r.started_at).getTime());
}
