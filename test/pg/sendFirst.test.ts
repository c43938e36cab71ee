// The batches intake asks to go first (PlanStore.sendFirst: those that took rows settled once the
// file was read) are marked in the journal in the intake's transaction: any node's claim takes
// them before the file's other due batches, and so does the reading node after a restart. Each is
// an ordinary batch once its first outcome is recorded, as SQLite hands each out once.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, describe, test } from 'node:test';
import type pg from 'pg';
import { pgFileStore } from '../../src/pgjournal/files.js';
import { migratePostgres, openPool } from '../../src/pgjournal/schema.js';
import { PgSendStore } from '../../src/pgjournal/sendStore.js';
import { SeenNumbers } from '../../src/plan/seenNumbers.js';
import { postgresMissing, usePostgres } from './cluster.js';
import { intakeFile, writeCsv } from './intakeRun.js';

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'smsdrop-pg-first-'));
after(() => fs.rmSync(dir, { recursive: true, force: true }));

describe('batches sent first, in the PostgreSQL journal', { skip: postgresMissing() }, () => {
  const pg15 = usePostgres();

  function pool(url: string): pg.Pool {
    const p = openPool(url, 4);
    p.on('error', () => undefined);
    after(() => p.end());
    return p;
  }

  async function node(url: string, id: string): Promise<PgSendStore> {
    const store = new PgSendStore(pool(url), { node: id, leaseMs: 60_000, reqIdOn: true });
    await store.start();
    after(() => store.close().catch(() => undefined));
    return store;
  }

  test('marked by the intake, claimed first by another node and after a restart', async () => {
    const url = await pg15.cluster.freshDatabase();
    const sql = pool(url);
    await migratePostgres(sql);
    const csv = path.join(dir, 'first.csv');
    writeCsv(csv, 12_000);
    const told: number[] = [];
    const files = pgFileStore(sql, {
      reader: { node: 'reader', leaseMs: 60_000 },
      sendFirst: (ids) => told.push(...ids),
    });
    const { fileId } = await intakeFile(csv, { files, seenNumbers: new SeenNumbers(8) });
    assert.ok(told.length >= 2, `the intake asked for some to go first (${told.length})`);
    const marked = await sql.query<{ id: number }>(
      'SELECT id FROM batches WHERE send_first ORDER BY id',
    );
    const first = [...told].sort((a, b) => a - b);
    assert.deepEqual(
      marked.rows.map((r) => r.id),
      first,
      'marked in the journal',
    );
    const planned = await sql.query<{ id: number }>(
      "SELECT id FROM batches WHERE file_id = $1 AND state = 'planned' ORDER BY id",
      [fileId],
    );
    const others = planned.rows.map((r) => r.id).filter((id) => !first.includes(id));
    assert.notDeepEqual(
      planned.rows.slice(0, first.length).map((r) => r.id),
      first,
      'not simply the lowest ids',
    );

    const query = (limit: number) => ({
      fileId,
      now: Date.now(),
      afterId: 0,
      limit,
      skip: new Set<number>(),
    });
    const other = await node(url, 'other');
    const claimed = await other.claimDueBatches(query(first.length));
    assert.deepEqual(
      [claimed.first.map((b) => b.batch.id), claimed.due],
      [first, []],
      'another node takes them first',
    );
    await other.close(); // its leases given up: the batches stay ones to send first

    const restarted = await node(url, 'reader');
    const again = await restarted.claimDueBatches(query(first.length + 1));
    assert.deepEqual(
      [again.first.map((b) => b.batch.id), again.due.map((b) => b.batch.id)],
      [first, [others[0]]],
      'the reading node, restarted, as well',
    );

    const { batch } = again.first[0]!;
    const [attempt] = await restarted.startAttempts([{ batch, reqId: batch.req_id }]);
    await restarted.recordOutcomes([
      {
        batchId: batch.id,
        transition: { to: 'accepted', statusCode: '000000', smsMessageSid: 's', dateCreated: 'd' },
        attempt: {
          id: attempt!,
          result: { outcome: 'accepted', statusCode: '000000', reason: 's' },
        },
      },
    ]);
    const left = await sql.query<{ id: number }>(
      'SELECT id FROM batches WHERE send_first ORDER BY id',
    );
    assert.deepEqual(
      left.rows.map((r) => r.id),
      first.slice(1),
      'an ordinary batch once its outcome is in',
    );
  });
});
