// StatusReads on the PostgreSQL journal: what `smsdrop status` asks, the rules of
// src/journalRules/statusReads.ts run on this journal's pool. The journal's size is the
// database's (pg_database_size): it has no WAL or intents file of its own to count, and its free
// space is PostgreSQL's business (VACUUM).
import type pg from 'pg';
import type { JournalHealth, StatusReads } from '../ports/reads.js';
import type { JournalSize } from '../ports/records.js';
import * as rules from '../journalRules/statusReads.js';
import { daemonStateOf } from './daemonState.js';
import { listNodes, nodesOfFiles } from './nodes.js';
import { value } from './readsQuery.js';
import { PG_DIALECT, runRule } from './rules.js';

/** StatusReads of the PostgreSQL journal on `pool`. */
export function pgStatusReads(pool: pg.Pool): StatusReads {
  return {
    unfinishedFileLines: () => runRule(pool, rules.unfinishedFileLines()),
    requestsFinishedSince: (since) => runRule(pool, rules.requestsFinishedSince(PG_DIALECT, since)),
    answersWithCodesSince: (codes, since) =>
      runRule(pool, rules.answersWithCodesSince(PG_DIALECT, codes, since)),
    numbersSettledSince: (fileId, since) =>
      runRule(pool, rules.numbersSettledSince(PG_DIALECT, fileId, since)),
    inFlight: (fileId) => runRule(pool, rules.inFlight(fileId)),
    lastAnswer: () => runRule(pool, rules.lastAnswer(PG_DIALECT)),
    oldestHeldFile: () => runRule(pool, rules.oldestHeldFile()),
    nodes: (withinMs) => listNodes(pool, withinMs),
    fileNodes: (fileIds) => nodesOfFiles(pool, fileIds),
    prunedFileCount: () => runRule(pool, rules.prunedFileCount()),
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
