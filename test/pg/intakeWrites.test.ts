// How the PostgreSQL plan store sends an intake's writes (src/pgjournal/planWrites.ts, ids.ts,
// planStore.ts): arrays written in PostgreSQL's text form by the store read back as they were, and
// the ids the next chunks take reserved by the sends themselves, not by statements of their own
// that would hold the intake up between two sends.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, describe, test } from 'node:test';
import type pg from 'pg';
import { IdReserve } from '../../src/pgjournal/ids.js';
import { pgFileStore } from '../../src/pgjournal/files.js';
import { arrayLiteral } from '../../src/pgjournal/planWrites.js';
import { migratePostgres } from '../../src/pgjournal/schema.js';
import { postgresMissing, usePostgres } from './cluster.js';
import { intakeFile, writeCsv } from './intakeRun.js';

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'smsdrop-pg-intake-writes-'));
after(() => fs.rmSync(dir, { recursive: true, force: true }));

test('IdReserve.topUp asks once below the low mark, not again while the ids are on their way', () => {
  const ids = new IdReserve('rows');
  assert.equal(ids.topUp(10, 100), 100, 'none in hand: a send should reserve 100');
  assert.equal(ids.topUp(10, 100), 0, 'one reservation on its way is enough');
  ids.add('5,6,7');
  assert.equal(ids.topUp(2, 100), 0, 'three in hand, above the low mark');
  assert.equal(ids.topUp(10, 100), 100, 'below it again, the last reservation arrived');
  ids.add(null); // a send that asked for none: nothing changes
  assert.deepEqual([ids.take(), ids.take(), ids.available], [5, 6, 1]);
  ids.add('9,12');
  assert.deepEqual([ids.take(), ids.take(), ids.take(), ids.available], [7, 9, 12, 0]);
});

describe('the plan store writing to PostgreSQL', { skip: postgresMissing() }, () => {
  const pg15 = usePostgres();

  test('an array in the text form the store writes reads back as it was', async () => {
    const db = pg15.cluster.pool(await pg15.cluster.freshDatabase(), 1);
    const texts = [
      '',
      'plain',
      'a,b',
      '{x}',
      'say "hi"',
      'back\\slash',
      '\\"',
      'NULL',
      ' sp ',
      '中文',
    ];
    const read = async (values: Parameters<typeof arrayLiteral>[0], type: string) => {
      const { rows } = await db.query<{ a: unknown[] }>(`SELECT $1::${type}[] AS a`, [
        arrayLiteral(values),
      ]);
      return rows[0]!.a;
    };
    assert.deepEqual(await read([...texts, null], 'text'), [...texts, null]);
    assert.deepEqual(await read([1, null, 9_007_199_254_740_991], 'text'), [
      '1',
      null,
      '9007199254740991',
    ]);
    assert.deepEqual(await read([2147483647, -5, null], 'int'), [2147483647, -5, null]);
    assert.deepEqual(await read([true, false, null], 'bool'), [true, false, null]);
    assert.deepEqual(await read([], 'bigint'), []);
  });

  test('a 20,000-row intake reserves its ids with its sends, not in statements between them', async () => {
    const pool = pg15.cluster.pool(await pg15.cluster.freshDatabase(), 4);
    const reservations: string[] = [];
    pool.on('connect', (client: pg.PoolClient) => {
      const query = client.query.bind(client) as (...args: unknown[]) => unknown;
      (client as { query: unknown }).query = (...args: unknown[]) => {
        const text = typeof args[0] === 'string' ? args[0] : (args[0] as { text?: string }).text;
        // a statement taking ids from a sequence that is not a send (which starts `WITH file`)
        const own = text?.includes('nextval(') && !text.trimStart().startsWith('WITH file');
        if (own) reservations.push(text!);
        return query(...args);
      };
    });
    await migratePostgres(pool);
    const csv = path.join(dir, 'ids.csv');
    writeCsv(csv, 20_000);
    await intakeFile(csv, { files: pgFileStore(pool) });
    const { rows } = await pool.query<{ rows: number; ids: boolean }>(
      'SELECT count(*)::int AS rows, count(DISTINCT id) = count(*) AS ids FROM rows',
    );
    assert.deepEqual(rows[0], { rows: 20_000, ids: true });
    // The first chunk reserves rows, groups and batches; later chunks find theirs in hand.
    assert.ok(reservations.length <= 4, `${reservations.length} reservations of their own`);
  });
});
