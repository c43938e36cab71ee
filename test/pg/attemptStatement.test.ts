// A request's attempt on the PostgreSQL journal (src/journalRules/outcomes.ts, startAttempt,
// through moves.ts's moveBatchThen) is one statement: the batch's move and the attempt's row in one
// data-modifying WITH, so the request waits for one round trip less before it leaves. A batch that
// does not move gets no attempt, and the statement after it only reads why.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type pg from 'pg';
import { startAttempt } from '../../src/pgjournal/sendMoves.js';
import { postgresMissing, usePostgres } from './cluster.js';
import { attemptsOf, batchRow, claim, journal } from './sendFixture.js';

/** startAttempt on a client of `pool`, with the first words of each statement it sent. */
async function attemptCounted(
  pool: pg.Pool,
  node: string,
  batch: { id: number; req_id: string },
): Promise<{ attempt: number | undefined; statements: string[] }> {
  const client = await pool.connect();
  const statements: string[] = [];
  const query = client.query.bind(client) as (...args: unknown[]) => unknown;
  const counting = (...args: unknown[]): unknown => {
    const text = typeof args[0] === 'string' ? args[0] : (args[0] as { text: string }).text;
    statements.push(text.trim().split(/\s+/).slice(0, 3).join(' '));
    return query(...args);
  };
  try {
    const attempt = await startAttempt(
      Object.assign(Object.create(client) as pg.PoolClient, { query: counting }),
      node,
      batch,
      batch.req_id,
    );
    return { attempt, statements };
  } finally {
    client.release();
  }
}

describe("a request's attempt on the PostgreSQL journal", { skip: postgresMissing() }, () => {
  const pg15 = usePostgres();

  test('is one statement that moves the batch and writes the attempt', async () => {
    const j = await journal(pg15.cluster);
    const a = await j.node({ node: 'a:1' });
    const [first] = await claim(a.store, { limit: 1 });
    const batch = { id: first!.batch.id, req_id: first!.batch.req_id };
    const { attempt, statements } = await attemptCounted(a.pool, 'a:1', batch);
    assert.deepEqual(statements, ['WITH moved AS']);
    assert.ok(attempt !== undefined);
    const row = await batchRow(j.sql, batch.id);
    assert.equal(row.state, 'sending');
    assert.equal(row.attempts, 1);
    const [written] = await attemptsOf(j.sql, batch.id);
    assert.equal(written?.id, attempt);
    assert.equal(written?.req_id, '', 'the batch’s own req_id, not kept twice');
  });

  test('writes nothing for a batch it may not move, and reads why', async () => {
    const j = await journal(pg15.cluster);
    const a = await j.node({ node: 'a:1' });
    const [first] = await claim(a.store, { limit: 1 });
    const batch = { id: first!.batch.id, req_id: first!.batch.req_id };
    // another node's name: the lease is not its own
    const { attempt, statements } = await attemptCounted(a.pool, 'b:1', batch);
    assert.equal(attempt, undefined);
    assert.deepEqual(statements, ['WITH moved AS', 'SELECT state, req_id']);
    assert.equal((await batchRow(j.sql, batch.id)).state, 'planned');
    assert.deepEqual(await attemptsOf(j.sql, batch.id), []);
  });
});
