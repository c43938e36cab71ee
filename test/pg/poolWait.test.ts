// A pool whose connections are all held (a partition holds their statements: the bytes wait, the
// connections stay open) answers a new checkout, after its connect timeout, with pg-pool's
// "timeout exceeded when trying to connect", an Error with no code. The pipeline must read it as
// the journal's server unreachable (it waits for it and reads the file again), not as a bug that
// fails the file into failed/ (seen in cluster chaos: E_UNEXPECTED, 19,493 messages never sent).
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { isDatabaseOutage } from '../../src/errors.js';
import { openPool } from '../../src/pgjournal/schema.js';
import { postgresMissing, usePostgres } from './cluster.js';

describe('a pool whose every connection is held', { skip: postgresMissing() }, () => {
  const pg15 = usePostgres();

  test('times a checkout out as the server unreachable', async () => {
    const pool = openPool(await pg15.cluster.freshDatabase(), 1, {
      connectionTimeoutMillis: 300,
    });
    const held = await pool.connect();
    const error = await pool.query('SELECT 1').then(
      () => undefined,
      (err: unknown) => err,
    );
    held.release();
    await pool.end();
    assert.ok(error instanceof Error, 'the checkout times out');
    assert.match(error.message, /timeout exceeded when trying to connect/);
    assert.equal(isDatabaseOutage(error), true);
  });
});
