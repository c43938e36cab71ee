// The repeat window's look-up of a chunk's numbers (journalRules/sentBefore.ts, earlierRowsOfAsks)
// on a journal whose statistics say a group has a couple of rows while one message an earlier file
// sent has 30,000 numbers: each number must be sought in its message's groups by group and number,
// not the message's every row read and compared with the chunk's numbers (what a file sharing a
// message with the day's earlier files waited for, chunk after chunk, before its first request).
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { earlierOf, earlierRowsOfAsks } from '../../src/journalRules/sentBefore.js';
import type { Queryable } from '../../src/pgjournal/claims.js';
import { PG_DIALECT, runRule } from '../../src/pgjournal/rules.js';
import { migratePostgres, openPool } from '../../src/pgjournal/schema.js';
import { postgresMissing, usePostgres } from './cluster.js';

const SENT_AT = '2099-01-01T00:00:00.000Z';
const SHARED = 200001;

/** 100,000 one-row groups over 20 files; then file 21's 30,000 rows of one message, accepted. */
const FILL = [
  `INSERT INTO files (id, sha256, name, size, encoding, status, created_at)
   SELECT i, 'h' || i, 'f' || i, 1, 'utf-8', 'done', 'x' FROM generate_series(1, 22) i`,
  `INSERT INTO groups (id, file_id, key_hash, app_id, template_id, datas)
   SELECT g, 1 + g % 20, hashtext(g::text), 'app', '1', '["' || g || '"]'
   FROM generate_series(1, 100000) g`,
  `INSERT INTO batches (id, file_id, group_id, req_id, numbers, state, created_at, updated_at)
   SELECT g, 1 + g % 20, g, 'r' || g, 1, 'accepted', 'x', 'x' FROM generate_series(1, 100000) g`,
  `INSERT INTO rows (id, file_id, line, phone_raw, phone, group_id, intake, batch_id)
   SELECT r, 1 + r % 20, r, '', (13000000000 + r * 7)::text, r, 'valid', r
   FROM generate_series(1, 100000) r`,
  `INSERT INTO groups (id, file_id, key_hash, app_id, template_id, datas)
   VALUES (${SHARED}, 21, 77, 'app', '1', '["shared"]')`,
  `INSERT INTO batches (id, file_id, group_id, req_id, numbers, state, created_at, updated_at)
   SELECT 300000 + b, 21, ${SHARED}, 's' || b, 200, 'accepted', 'x', 'x'
   FROM generate_series(0, 149) b`,
  `INSERT INTO attempts (id, batch_id, req_id, started_at, finished_at, outcome)
   SELECT id, id, '', '${SENT_AT}', '${SENT_AT}', 'accepted' FROM batches`,
  `INSERT INTO rows (id, file_id, line, phone_raw, phone, group_id, intake, batch_id)
   SELECT 300000 + r, 21, r, '', (15000000000 + r)::text, ${SHARED}, 'valid', 300000 + r / 200
   FROM generate_series(0, 29999) r`,
  'ANALYZE',
];

describe("the repeat window's look-up of a chunk's numbers", { skip: postgresMissing() }, () => {
  const pg15 = usePostgres();

  test('seeks each number in its message’s groups by group and number', async () => {
    const pool = openPool(await pg15.cluster.freshDatabase(), 2);
    try {
      await migratePostgres(pool);
      for (const statement of FILL) await pool.query(statement);
      const statements: Array<[string, unknown[]]> = [];
      const recording: Queryable = {
        query: (text: string, params?: unknown[]) => {
          statements.push([text, params ?? []]);
          return pool.query(text, params);
        },
      } as Queryable;
      const shared = earlierOf([SHARED], () => []);
      const own = earlierOf([7], () => []);
      const phones = Array.from({ length: 100 }, (_, i) => String(16000000000 + i));
      const asks = [
        ...phones.map((p) => [shared, p] as const),
        [shared, '15000000123'] as const,
        [own, String(13000000000 + 7 * 7)] as const,
        [own, '15000000124'] as const,
      ];
      const found = await runRule(recording, earlierRowsOfAsks(PG_DIALECT, asks, '2098-01-01'));
      assert.equal(statements.length, 1);
      const [text, params] = statements[0]!;
      const { rows } = await pool.query<{ 'QUERY PLAN': string }>(`EXPLAIN ${text}`, params);
      const plan = rows.map((r) => r['QUERY PLAN']).join('\n');
      assert.match(plan, /Index Cond: \(\(group_id = p\.i\) AND \(phone = p\.t\)\)/, plan);
      assert.doesNotMatch(plan, /Seq Scan on rows\b/, plan);
      assert.deepEqual(found.get('15000000123'), [
        { phone: '15000000123', groupId: SHARED, id: 300123 },
      ]);
      assert.deepEqual(found.get(String(13000000049)), [
        { phone: '13000000049', groupId: 7, id: 7 },
      ]);
      assert.deepEqual(found.get('15000000124'), [], 'a number of another message is not its');
      for (const p of phones) assert.deepEqual(found.get(p), []);
    } finally {
      await pool.end();
    }
  });
});
