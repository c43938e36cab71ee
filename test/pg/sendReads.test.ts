// The sender's reads on PostgreSQL answer as SQLite's: a real journal made by `smsdrop send`
// against the simulator with faults (sentJournal.ts: retries, give-ups, a blacklisted number),
// copied into PostgreSQL (copy.ts), then attemptHistory, providerSilentFor, recentStarts and
// nextDueAt asked of every batch of both. PostgreSQL's providerSilentFor counts its own node's
// answers only (SQLite's, any process's: test/conformance/sendStore.test.ts): here every attempt
// is the store's node's. The SQLite journal is opened through src/journals/, as
// `smsdrop send` opens it.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type pg from 'pg';
import { openTableDump, openWriter } from '../../src/journals/index.js';
import { copyJournal } from '../../src/pgjournal/copy.js';
import { migratePostgres, openPool } from '../../src/pgjournal/schema.js';
import { PgSendStore } from '../../src/pgjournal/sendStore.js';
import type { SendStore } from '../../src/ports/send.js';
import { STORED_TIME_PARAM, withSqliteFile } from '../sqliteFile.js';
import { postgresMissing, usePostgres } from './cluster.js';
import { type SentJournal, sentJournal } from './sentJournal.js';

/** What the sender may ask of every batch, and of the journal as a whole. */
async function answers(
  store: SendStore,
  batches: { id: number; req_id: string; file_id: number }[],
) {
  const perBatch = [];
  for (const b of batches) {
    const silent: boolean[] = [];
    for (const n of [1, 2, 3]) silent.push(await store.providerSilentFor(b.id, n));
    perBatch.push({
      id: b.id,
      history: await store.attemptHistory(b.id, b.req_id),
      otherReqId: await store.attemptHistory(b.id, 'another'),
      silent,
    });
  }
  const nextDueAt: (number | null)[] = [];
  for (const id of new Set(batches.map((b) => b.file_id)))
    nextDueAt.push(await store.nextDueAt(id));
  return {
    perBatch,
    recentStarts: await store.recentStarts(0),
    recentNone: await store.recentStarts(Date.now() + 60_000),
    nextDueAt,
  };
}

describe('the PostgreSQL SendStore reads as the SQLite one', { skip: postgresMissing() }, () => {
  const pg15 = usePostgres();
  let made: SentJournal;
  let pool: pg.Pool;

  before(async () => {
    made = await sentJournal();
    pool = openPool(await pg15.cluster.freshDatabase(), 4);
    pool.on('error', () => undefined);
    await migratePostgres(pool);
    const dump = openTableDump(made.dataDir)!;
    try {
      await copyJournal(dump, pool);
    } finally {
      dump.close();
    }
  });
  after(async () => {
    await pool?.end();
    await made?.simulator.stop();
  });

  test('attemptHistory, providerSilentFor, recentStarts and nextDueAt', async () => {
    const { rows: batches } = await pool.query<{ id: number; req_id: string; file_id: number }>(
      'SELECT id, req_id, file_id FROM batches ORDER BY id',
    );
    const retried = await pool.query(
      'SELECT batch_id FROM attempts GROUP BY batch_id HAVING count(*) > 1',
    );
    assert.ok(retried.rowCount! > 0, 'some batch was tried more than once');
    const opened = await openWriter(
      { dataDir: made.dataDir },
      { role: 'test', synchronous: 'normal', reqIdOn: true, onLost: () => undefined },
    );
    try {
      // A request after every answer, itself unanswered: the provider silent since it began.
      const late = [batches[0]!.id, batches[0]!.req_id, '2099-01-01T00:00:00.000Z'];
      withSqliteFile(
        made.dataDir,
        (raw) =>
          raw
            .prepare(
              `INSERT INTO attempts (batch_id, req_id, started_at, outcome)
               VALUES (?, ?, ${STORED_TIME_PARAM}, 'in-doubt')`,
            )
            .run(...late),
        { write: true },
      );
      await pool.query(
        "INSERT INTO attempts (batch_id, req_id, started_at, outcome) VALUES ($1, $2, $3, 'in-doubt')",
        late,
      );
      const want = await answers(opened.handle.send, batches);
      assert.ok(
        want.perBatch.some((b) => b.silent.includes(true)),
        'a silent provider somewhere',
      );
      // The server's processes, one node of a cluster
      await pool.query("UPDATE attempts SET node = 'a:1'");
      const store = new PgSendStore(pool, { node: 'a:1', leaseMs: 30_000, reqIdOn: true });
      assert.deepEqual(await answers(store, batches), want);
    } finally {
      await opened.handle.close();
    }
  });
});
