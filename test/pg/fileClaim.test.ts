// A file belongs to the node reading and sending it: another node with a copy of the same bytes
// (dropped into its own inbox) is told who has it and waits, until the file is let go or the
// reader's claim passes (the node is gone); renewals keep a living reader's claim.
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { after, describe, test } from 'node:test';
import { renewLeases } from '../../src/pgjournal/claims.js';
import { pgFileStore } from '../../src/pgjournal/files.js';
import { migratePostgres, openPool } from '../../src/pgjournal/schema.js';
import { postgresMissing, usePostgres } from './cluster.js';

describe('the node reading a file', { skip: postgresMissing() }, () => {
  const pg15 = usePostgres();

  async function twoNodes(leaseMs: number) {
    const pool = openPool(await pg15.cluster.freshDatabase(), 4);
    pool.on('error', () => undefined);
    after(() => pool.end());
    await migratePostgres(pool);
    const a = pgFileStore(pool, { reader: { node: 'node-a', leaseMs } });
    const b = pgFileStore(pool, { reader: { node: 'node-b', leaseMs } });
    const file = await a.create({
      sha256: 'f'.repeat(64),
      name: 'spring.csv',
      path: '/a/processing/spring.csv',
      size: 10,
      encoding: 'utf-8',
    });
    return { pool, a, b, id: file.id };
  }

  test('one node at a time; the other is told who, until it is let go', async () => {
    const { a, b, id } = await twoNodes(60_000);
    assert.equal(await a.claim(id), undefined, 'A reads it');
    assert.equal(await a.claim(id), undefined, 'A again (its own, after a restart under its id)');
    assert.equal(await b.claim(id), 'node-a', 'B waits for A');
    await a.unclaim(id);
    assert.equal(await b.claim(id), undefined, 'B, once A let go');
    assert.equal(await a.claim(id), 'node-b');
  });

  test("a gone reader's claim passes; a living one's is renewed with its leases", async () => {
    const { pool, a, b, id } = await twoNodes(1_500);
    assert.equal(await a.claim(id), undefined);
    for (let i = 0; i < 4; i++) {
      await sleep(500);
      await renewLeases(pool, { node: 'node-a', ms: 1_500 });
    }
    assert.equal(await b.claim(id), 'node-a', 'renewed past its first lease');
    await sleep(1_700); // A is gone: nothing renews it
    assert.equal(await b.claim(id), undefined, 'B takes it over');
  });
});
