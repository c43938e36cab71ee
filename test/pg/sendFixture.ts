// A PostgreSQL journal holding one file's planned batches, written with SQL, and the nodes'
// stores on it: what test/pg/send*.test.ts start from.
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { after } from 'node:test';
import type pg from 'pg';
import { type Config, DEMO_CREDENTIALS } from '../../src/config/index.js';
import { migratePostgres, openPool } from '../../src/pgjournal/schema.js';
import { PgSendStore, type PgSendStoreOptions } from '../../src/pgjournal/sendStore.js';
import { createProviderClient } from '../../src/provider/client.js';
import type { Postgres } from './cluster.js';

/** Planned batches 1..BATCHES of file 1, two numbers each (with their rows), all due. */
export const BATCHES = 20;

const SEED = `
  INSERT INTO files (id, sha256, name, size, encoding, status, created_at) VALUES
    (1, 'a', 'a.csv', 1, 'utf-8', 'sending', 't');
  INSERT INTO groups (id, file_id, key_hash, app_id, template_id, datas) VALUES
    (1, 1, 1, 'app', '7', '["x"]');
  INSERT INTO batches (id, file_id, group_id, req_id, numbers, state, next_attempt_at, created_at, updated_at)
    SELECT i, 1, 1, 'req' || i, 2, 'planned', 0, 't', 't' FROM generate_series(1, ${BATCHES}) i;
  INSERT INTO batch_numbers (batch_id, phones) SELECT id, '1380000' || id || ',1390000' || id FROM batches;
  INSERT INTO rows (file_id, line, phone_raw, phone, group_id, intake, batch_id)
    SELECT 1, 2 * id, p, p, 1, 'valid', id
    FROM batches, unnest(ARRAY['1380000' || id, '1390000' || id]) p;
  SELECT setval(pg_get_serial_sequence('batches', 'id'), 1000);
`;

export interface Journal {
  url: string;
  /** A pool for reading and arranging the journal as a test needs. */
  sql: pg.Pool;
  /** A new pool on the journal (ended after the test). */
  pool(): pg.Pool;
  /** A node's store on a pool of its own, its keeper started unless `keep` is false. */
  node(options: Partial<PgSendStoreOptions> & { node: string }, keep?: boolean): Promise<Node>;
}

export interface Node {
  store: PgSendStore;
  pool: pg.Pool;
}

export async function journal(cluster: Postgres): Promise<Journal> {
  const url = await cluster.freshDatabase();
  const pools: pg.Pool[] = [];
  after(() => Promise.all(pools.map((p) => p.end().catch(() => undefined))));
  const pool = (): pg.Pool => {
    const p = openPool(url, 4);
    p.on('error', () => undefined);
    pools.push(p);
    return p;
  };
  const sql = pool();
  await migratePostgres(sql);
  await sql.query(SEED);
  return {
    url,
    sql,
    pool,
    async node(options, keep = true) {
      const p = pool();
      const store = new PgSendStore(p, { leaseMs: 60_000, reqIdOn: true, ...options });
      if (keep) await store.start();
      after(() => store.close().catch(() => undefined));
      return { store, pool: p };
    },
  };
}

/** A due query of file 1. */
export function due(more: { afterId?: number; limit?: number; skip?: Iterable<number> } = {}) {
  return {
    fileId: 1,
    now: Date.now(),
    afterId: more.afterId ?? 0,
    limit: more.limit ?? 100,
    skip: new Set(more.skip ?? []),
  };
}

/** The ids a claim handed out. */
export async function claim(store: PgSendStore, more: Parameters<typeof due>[0] = {}) {
  const { first, due: rest } = await store.claimDueBatches(due(more));
  return [...first, ...rest];
}

export async function batchRow(
  sql: pg.Pool,
  id: number,
): Promise<{
  state: string;
  req_id: string;
  attempts: number;
  maybe_sent: number;
  first_doubt_at: string | null;
  lease_node: string | null;
  status_msg: string | null;
}> {
  const { rows } = await sql.query('SELECT * FROM batches WHERE id = $1', [id]);
  assert.ok(rows[0], `batch ${id}`);
  return rows[0] as never;
}

export async function attemptsOf(
  sql: pg.Pool,
  batchId: number,
): Promise<{ id: number; req_id: string | null; started_at: string; outcome: string | null }[]> {
  const { rows } = await sql.query(
    'SELECT id, req_id, started_at, finished_at, outcome FROM attempts WHERE batch_id = $1 ORDER BY id',
    [batchId],
  );
  return rows as never;
}

/** Waits until every lease of `node` has passed by the database's clock. */
export async function leasesPassed(sql: pg.Pool, node: string): Promise<void> {
  for (const deadline = Date.now() + 30_000; Date.now() < deadline; await sleep(50)) {
    const { rows } = await sql.query<{ live: number }>(
      'SELECT count(*)::int AS live FROM batches WHERE lease_node = $1 AND lease_until > clock_timestamp()',
      [node],
    );
    if (rows[0]!.live === 0) return;
  }
  assert.fail(`the leases of ${node} did not pass within 30 s`);
}

/**
 * File 2: `batches` planned batches (ids 101 on) of two numbers each, 138… and 139… with the
 * batch's number, for the simulator's app and template 1: what a real sender sends to it.
 */
export function simulatorBatchesSql(batches: number): string {
  return `
  INSERT INTO files (id, sha256, name, size, encoding, status, created_at) VALUES
    (2, 'b', 'b.csv', 1, 'utf-8', 'sending', 't');
  INSERT INTO groups (id, file_id, key_hash, app_id, template_id, datas) VALUES
    (2, 2, 2, '${DEMO_CREDENTIALS.appId}', '1', '["a","b"]');
  INSERT INTO batches (id, file_id, group_id, req_id, numbers, state, next_attempt_at, created_at, updated_at)
    SELECT 100 + i, 2, 2, md5('r' || i), 2, 'planned', 0, 't', 't' FROM generate_series(1, ${batches}) i;
  INSERT INTO batch_numbers (batch_id, phones)
    SELECT id, '138' || lpad((id - 100)::text, 8, '0') || ',139' || lpad((id - 100)::text, 8, '0')
    FROM batches WHERE file_id = 2;
`;
}

/** A provider client to `baseUrl` with the demo account and `config`'s settings, closed after. */
export function simulatorClient(baseUrl: string, config: Config, connections: number) {
  const client = createProviderClient({
    baseUrl,
    accountSid: DEMO_CREDENTIALS.accountSid,
    authToken: DEMO_CREDENTIALS.authToken,
    format: config.format,
    maxPerRequest: config.maxPerRequest,
    connectTimeoutMs: config.connectTimeoutMs,
    responseTimeoutMs: config.responseTimeoutMs,
    connections,
  });
  after(() => client.close());
  return client;
}
