// StatusReads on the PostgreSQL journal: what `smsdrop status` asks (src/journal/statusReads.ts
// on SQLite, the same statements). The journal's size is the database's (pg_database_size): it has
// no WAL or intents file of its own to count, and its free space is PostgreSQL's business (VACUUM).
import type pg from 'pg';
import type { JournalHealth, StatusReads } from '../ports/reads.js';
import type { FileLine, HeldFile, JournalSize } from '../ports/records.js';
import { BATCH_STATE, FILE_STATUS, OUTCOME_STATES, sqlList } from '../ports/states.js';
import { daemonStateOf } from './daemonState.js';
import { listNodes } from './nodes.js';
import { all, BYTES, first, value } from './readsQuery.js';

type LastAnswer = { outcome: string | null; status_code: string | null; finished_at: string };

/** StatusReads of the PostgreSQL journal on `pool`. */
export function pgStatusReads(pool: pg.Pool): StatusReads {
  return {
    unfinishedFileLines: () =>
      all<FileLine>(
        pool,
        `SELECT * FROM v_files WHERE status IN ${sqlList([FILE_STATUS.intake, FILE_STATUS.sending])} ORDER BY id`,
      ),
    requestsFinishedSince: async (since) =>
      (await first<{ count: number; first: string | null }>(
        pool,
        'SELECT count(*) AS count, min(started_at) AS first FROM attempts WHERE finished_at >= $1',
        [since],
      ))!,
    answersWithCodesSince: (codes, since) =>
      codes.length === 0
        ? []
        : all<{ code: string; count: number }>(
            pool,
            `SELECT status_code AS code, count(*) AS count FROM attempts
             WHERE finished_at >= $1 AND status_code = ANY($2::text[])
             GROUP BY status_code ORDER BY count DESC, status_code ${BYTES}`,
            [since, codes],
          ),
    numbersSettledSince: async (fileId, since) =>
      (await value<number>(
        pool,
        `SELECT coalesce(sum(numbers), 0) FROM batches WHERE file_id = $1 AND state IN ${sqlList(OUTCOME_STATES)} AND updated_at >= $2`,
        [fileId, since],
      ))!,
    inFlight: async (fileId) =>
      (await first<{ requests: number; numbers: number }>(
        pool,
        `SELECT count(*) AS requests, coalesce(sum(numbers), 0) AS numbers FROM batches WHERE file_id = $1 AND state = '${BATCH_STATE.sending}'`,
        [fileId],
      ))!,
    lastAnswer: () =>
      first<LastAnswer>(
        pool,
        `SELECT outcome, status_code, finished_at FROM attempts WHERE finished_at IS NOT NULL
         ORDER BY finished_at ${BYTES} DESC LIMIT 1`,
      ),
    oldestHeldFile: () =>
      first<HeldFile>(
        pool,
        'SELECT id, name, status, created_at, finished_at FROM files WHERE pruned_at IS NULL ORDER BY id LIMIT 1',
      ),
    nodes: (withinMs) => listNodes(pool, withinMs),
    prunedFileCount: async () =>
      (await value<number>(pool, 'SELECT count(*) FROM files WHERE pruned_at IS NOT NULL'))!,
    daemonState: (pid) => daemonStateOf(pool, pid),
    size: () => databaseSize(pool),
    // A PostgreSQL commit that returned is durable: nothing is lost behind the process's back, so
    // the one question is whether the server answers now.
    health: () => (pool.ended ? 'closed' : answers(pool)),
  };
}

/**
 * How long a health probe waits for the server's answer: a load balancer's probe gives up after a
 * few seconds, and a server that takes longer than this to answer `SELECT 1` is not serving.
 */
const PROBE_MS = 3_000;

/** 'writable' when the server answers a statement within PROBE_MS, 'unreachable' otherwise. */
async function answers(pool: pg.Pool): Promise<JournalHealth> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<JournalHealth>((resolve) => {
    timer = setTimeout(() => resolve('unreachable'), PROBE_MS);
  });
  const probe = pool.query('SELECT 1').then(
    (): JournalHealth => 'writable',
    (): JournalHealth => (pool.ended ? 'closed' : 'unreachable'),
  );
  try {
    return await Promise.race([probe, late]);
  } finally {
    clearTimeout(timer);
  }
}

async function databaseSize(pool: pg.Pool): Promise<JournalSize> {
  const bytes = (await value<number>(pool, 'SELECT pg_database_size(current_database())'))!;
  return { bytes, database: bytes, wal: 0, intents: 0, free: 0, server: 'postgresql' };
}
