// The small stores of the PostgreSQL journal (outbox, suppression list, daemon state, retry,
// maintenance) answer and write as SQLite's do: each test runs the same calls on a real SQLite
// journal and a real PostgreSQL one holding the same content, and compares. The SQLite journal's
// stores are opened through src/journals/, and its rows seeded and read with plain statements.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, describe, test } from 'node:test';
import type pg from 'pg';
import { openWriter } from '../../src/journals/index.js';
import type { JournalHandle } from '../../src/ports/index.js';
import { daemonStateOf, pgDaemonState } from '../../src/pgjournal/daemonState.js';
import { pgMaintenance } from '../../src/pgjournal/prune.js';
import { pgOutbox, type WebhookTargets } from '../../src/pgjournal/outbox.js';
import { pgRetryStore } from '../../src/pgjournal/retry.js';
import { migratePostgres, openPool } from '../../src/pgjournal/schema.js';
import { pgSuppressionList } from '../../src/pgjournal/suppression.js';
import { openSqliteFile, type SqliteFile } from '../sqliteFile.js';
import { postgresMissing, usePostgres } from './cluster.js';
import { SAMPLE, insertSql } from './sample.js';

type Row = Record<string, unknown>;

/** The SQLite journal's columns of `table` in id order, less those named (times, random ids). */
function sqliteRows(db: SqliteFile, table: string, less: string[] = []): Row[] {
  const rows = db.prepare(`SELECT * FROM ${table} ORDER BY 1, 2`).all() as Row[];
  return rows.map((r) => omit(r, less));
}

async function pgRows(pool: pg.Pool, table: string, less: string[] = []): Promise<Row[]> {
  const { rows } = await pool.query<Row>(`SELECT * FROM ${table} ORDER BY 1, 2`);
  return rows.map((r) => omit(r, [...less, 'lease_node', 'lease_until', 'send_first']));
}

function omit(row: Row, less: string[]): Row {
  return Object.fromEntries(Object.entries(row).filter(([k]) => !less.includes(k)));
}

describe('the small stores on PostgreSQL', { skip: postgresMissing() }, () => {
  const pg15 = usePostgres();

  /** Both journals with the sample's content (or empty), the PostgreSQL one with its stores. */
  async function journals(seed = true) {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'pg-small-'));
    const { handle: sqlite } = await openWriter(
      { dataDir: dir },
      {
        role: 'pg small stores test',
        synchronous: 'normal',
        reqIdOn: false,
        onLost: () => assert.fail('journal lost'),
      },
    );
    const db = openSqliteFile(dir, { write: true });
    const pool = openPool(await pg15.cluster.freshDatabase(), 3);
    pool.on('error', () => undefined);
    after(async () => {
      db.close();
      await sqlite.close();
      await pool.end();
      fs.rmSync(dir, { recursive: true, force: true });
    });
    await migratePostgres(pool);
    if (seed)
      for (const [table, rows] of SAMPLE)
        for (const row of rows) {
          db.prepare(insertSql(table, row, 'sqlite')).run(...Object.values(row));
          await pool.query(insertSql(table, row, 'pg'), Object.values(row));
        }
    // Each batch's numbers, from its rows (the sample has none).
    const numbers = `INSERT INTO batch_numbers (batch_id, phones)
      SELECT batch_id, group_concat(phone, ',') FROM (SELECT batch_id, phone FROM rows WHERE batch_id IS NOT NULL ORDER BY line) GROUP BY batch_id`;
    if (seed) {
      db.exec(numbers);
      await pool.query(
        numbers
          .replace("group_concat(phone, ',')", "string_agg(phone, ',' ORDER BY line)")
          .replace('SELECT batch_id, phone FROM', 'SELECT batch_id, phone, line FROM')
          .replace('ORDER BY line) GROUP', ') t GROUP'),
      );
    }
    // Rows inserted with their ids leave the identities where they were: on from the largest.
    for (const table of ['files', 'groups', 'rows', 'batches', 'attempts', 'webhook_outbox'])
      await pool.query(
        `SELECT setval(pg_get_serial_sequence('${table}', 'id'), (SELECT coalesce(max(id), 0) + 1 FROM ${table}), false)`,
      );
    const targets: WebhookTargets = { ids: [] };
    const inProgress = new Set<number>();
    const postgres = {
      outbox: pgOutbox(pool, targets, () => true),
      suppression: pgSuppressionList(pool),
      daemon: pgDaemonState(pool, targets, 'node-a'),
      retry: pgRetryStore(pool),
      maintenance: pgMaintenance(pool),
    };
    return { db, pool, sqlite, postgres, inProgress };
  }

  test('the suppression list adds, removes and lists as SQLite does', async () => {
    const { sqlite, postgres } = await journals(false);
    for (const store of [sqlite.suppression, postgres.suppression]) {
      assert.equal(
        await store.add(['13800000001', '13800000002', '13800000001'], 'opt-out', 'list'),
        2,
      );
      assert.equal(await store.add(['13800000002', '13800000003'], 'blacklisted', 'provider'), 1);
      assert.equal(await store.remove(['13800000003', '13899999999']), 1);
    }
    const shown = async (store: JournalHandle['suppression']) =>
      (await store.list()).map(({ addedAt: _, ...n }) => n);
    assert.deepEqual(await shown(postgres.suppression), await shown(sqlite.suppression));
    assert.deepEqual(
      (await shown(postgres.suppression)).map((n) => [n.phone, n.reason]),
      [
        ['13800000001', 'opt-out'],
        ['13800000002', 'opt-out'],
      ],
    );
  });

  test('the daemon state: one paused and one resumed event per pause, as SQLite writes them', async () => {
    const { db, pool, sqlite, postgres } = await journals(false);
    for (const [outbox, daemon] of [
      [sqlite.outbox, sqlite.daemon],
      [postgres.outbox, postgres.daemon],
    ] as const) {
      outbox.setTargets(['t1', 't2']);
      await daemon.setPause({ paused: '111142: balance', code: 'E_PROVIDER_BALANCE', pid: 7 });
      await daemon.setPause({ paused: '111142: still', code: 'E_PROVIDER_BALANCE', pid: 7 });
      await daemon.setWaiting('message window', 7);
      await daemon.setPause({ paused: null, pid: 7 });
      await daemon.setPause({ paused: '111141: account', code: 'E_PROVIDER_ACCOUNT', pid: 7 });
    }
    const times = ['updated_at', 'paused_since', 'created_at', 'body'];
    // The pause in the account's row; the process and what it waits for in the node's own row:
    // status reads them together as SQLite's one row.
    const [sqliteState] = sqliteRows(db, 'daemon_state', [...times, 'id']);
    assert.deepEqual(omit({ ...(await daemonStateOf(pool, 7)) }, times), sqliteState);
    assert.deepEqual(
      omit((await pgRows(pool, 'daemon_state', times))[0]!, ['waiting']),
      omit(sqliteRows(db, 'daemon_state', times)[0]!, ['waiting']),
    );
    const outbox = await pgRows(pool, 'webhook_outbox', times);
    assert.deepEqual(outbox, sqliteRows(db, 'webhook_outbox', times));
    assert.deepEqual(
      outbox.map((e) => `${String(e.event)} ${String(e.target)}`),
      ['sending.paused t1', 'sending.paused t2', 'sending.resumed t1', 'sending.resumed t2'].concat(
        ['sending.paused t1', 'sending.paused t2'],
      ),
    );
  });

  test("the outbox: a file's event carries its counts; delivery is marked as in SQLite", async () => {
    const { sqlite, postgres } = await journals();
    const bodies = [];
    for (const outbox of [sqlite.outbox, postgres.outbox]) {
      assert.equal(outbox.hasTargets(), false);
      await outbox.recordEventNow('file.finished', 1);
      assert.deepEqual(await outbox.undelivered('t1', 10), [], 'nothing without a receiver');
      outbox.setTargets(['t1']);
      await outbox.recordEventNow('file.finished', 1);
      await outbox.recordEventNow('file.failed', { name: 'x.xlsx', status: 'refused' }, 'Excel');
      await outbox.recordEventNow('file.taken', 99);
      const [first, second, third] = await outbox.undelivered('t1', 10);
      await outbox.markDelivered([first!.id]);
      await outbox.noteDeliveryFailed(second!.id, 'HTTP 500');
      const left = await outbox.undelivered('t1', 10);
      assert.deepEqual(
        left.map((e) => [e.id, e.attempts]),
        [
          [second!.id, 1],
          [third!.id, 0],
        ],
      );
      bodies.push(
        [first, second, third].map((e) => omit(JSON.parse(e!.body) as Row, ['id', 'at'])),
      );
    }
    assert.deepEqual(bodies[1], bodies[0]);
    const counts = (bodies[1]![0]!.file as Row).counts as Row;
    assert.equal(counts.rows, 8);
    assert.equal(counts.requests, 4);
  });

  test('retry: the same batches, rows and file afterwards as in SQLite', async () => {
    const { db, pool, sqlite, postgres } = await journals();
    const keeps = () => true;
    for (const retry of [sqlite.retry, postgres.retry]) {
      assert.equal(await retry.countRetryable(1, ['failed', 'unknown']), 3);
      assert.deepEqual(await retry.countUnknownByReqId(2, 200, keeps), {
        ownReqId: 1,
        newReqId: 0,
      });
      assert.deepEqual(await retry.countUnknownByReqId(2, 200, () => false), {
        ownReqId: 0,
        newReqId: 1,
      });
    }
    const prepared = [];
    for (const retry of [sqlite.retry, postgres.retry]) {
      const one = await retry.prepareRetry(1, ['failed'], 1);
      const two = await retry.prepareRetry(2, ['unknown'], 1, {
        keepsOwnReqId: keeps,
        newReqIds: false,
      });
      prepared.push([one, two, await retry.retryOutcome(1, one), await retry.retryOutcome(2, two)]);
    }
    assert.deepEqual(prepared[1], prepared[0]);
    assert.deepEqual(prepared[0]![0], {
      rows: 3,
      firstBatchId: 7,
      ownReqIdBatchIds: [],
      repeats: 0,
    });
    assert.deepEqual(prepared[0]![1], {
      rows: 1,
      firstBatchId: null,
      ownReqIdBatchIds: [5],
      repeats: 0,
    });
    const times = ['created_at', 'updated_at', 'finished_at', 'started_at'];
    const newIds = (rows: Row[]) =>
      rows.map((r) => ((r.id as number) > 6 ? omit(r, ['req_id']) : r));
    assert.deepEqual(
      newIds(await pgRows(pool, 'batches', times)),
      newIds(sqliteRows(db, 'batches', times)),
    );
    assert.deepEqual(await pgRows(pool, 'batch_numbers'), sqliteRows(db, 'batch_numbers'));
    assert.deepEqual(await pgRows(pool, 'rows'), sqliteRows(db, 'rows'));
    assert.deepEqual(await pgRows(pool, 'files', times), sqliteRows(db, 'files', times));
  });

  test('retry leaves out the numbers another file sent the same message to', async () => {
    const { db, pool, sqlite, postgres } = await journals();
    // Row 2's number (batch 3, group 1) was sent by another file's row 6.
    const sentBefore = (keyHash: number) =>
      keyHash === 11
        ? { size: 1, rowOf: (phone: string) => (phone === '13800000002' ? 6 : undefined) }
        : undefined;
    for (const retry of [sqlite.retry, postgres.retry])
      assert.deepEqual(await retry.prepareRetry(1, ['failed'], 200, undefined, sentBefore), {
        rows: 2,
        firstBatchId: 7,
        ownReqIdBatchIds: [],
        repeats: 1,
      });
    const times = ['created_at', 'updated_at', 'finished_at', 'started_at', 'req_id'];
    assert.deepEqual(await pgRows(pool, 'batches', times), sqliteRows(db, 'batches', times));
    assert.deepEqual(await pgRows(pool, 'rows'), sqliteRows(db, 'rows'));
    assert.deepEqual(await pgRows(pool, 'files', times), sqliteRows(db, 'files', times));
  });

  test('prune takes the same files and keeps the same counts and totals as SQLite', async () => {
    const { db, pool, sqlite, postgres, inProgress } = await journals();
    // File 1 ends; its planned batch 4 never went (no attempt, no parent): it may be pruned.
    const end =
      "UPDATE files SET status = 'done', finished_at = '2026-11-27T04:00:00.000Z' WHERE id = 1";
    db.exec(end);
    await pool.query(end);
    const endedBefore = '2026-11-28T00:00:00.000Z';
    inProgress.add(2);
    const dry = await postgres.maintenance.prune({ endedBefore, dryRun: true }, inProgress);
    assert.deepEqual(
      dry.files.map((f) => f.id),
      [1],
      'file 2 is being processed',
    );
    assert.deepEqual(dry.records, { rows: 8, groups: 2, batches: 5, attempts: 4 });
    inProgress.clear();
    const results = [];
    for (const maintenance of [sqlite.maintenance, postgres.maintenance]) {
      const r = await maintenance.prune({ endedBefore, suppressed: true }, inProgress);
      results.push({ files: r.files, records: r.records, suppressed: r.suppressed });
    }
    assert.deepEqual(results[1], results[0]);
    assert.deepEqual(
      results[1]!.files.map((f) => f.id),
      [1, 2],
    );
    const less = ['pruned_at'];
    // SQLite's groups also have `app`, the app by reference (src/journal/storedForms.ts)
    const sqliteLess = (table: string) => (table === 'groups' ? [...less, 'app'] : less);
    for (const table of ['files', 'pruned_totals', 'rows', 'groups', 'batches', 'attempts'])
      assert.deepEqual(
        await pgRows(pool, table, less),
        sqliteRows(db, table, sqliteLess(table)),
        table,
      );
    assert.deepEqual(
      (await pgRows(pool, 'rows')).map((r) => r.file_id),
      [3],
      'every row of files 1 and 2 went',
    );
    const size = await postgres.maintenance.size();
    assert.ok(size.bytes > 100_000 && size.bytes === size.database, JSON.stringify(size));
  });

  test('backup refuses, naming pg_dump', async () => {
    const { postgres } = await journals(false);
    await assert.rejects(
      postgres.maintenance.backup('/tmp'),
      (err: { code?: string; message: string }) => {
        assert.equal(err.code, 'E_BACKUP_POSTGRES');
        assert.match(err.message, /pg_dump/);
        return true;
      },
    );
  });
});
