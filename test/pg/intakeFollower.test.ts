// A small file read beside a large one on another node (src/pgjournal/intakeTurn.ts: a follower):
// it waits for the check turn, which the large file's reader hands over between two commits, not
// for the large file's end; and one whose rows another file still being read holds too gives way
// and is read again after it, counting those rows as repeats.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { after, describe, test } from 'node:test';
import type pg from 'pg';
import { hasCode } from '../../src/errors.js';
import { pgFileStore } from '../../src/pgjournal/files.js';
import { migratePostgres, openPool } from '../../src/pgjournal/schema.js';
import { pgReadStore } from '../../src/pgjournal/readStore.js';
import { IntakeTurns } from '../../src/pipeline/turns.js';
import { postgresMissing, usePostgres } from './cluster.js';
import { intakeFile, type IntakeRun, writeCsv } from './intakeRun.js';

const WINDOW = { ms: 86_400_000, text: '24h' };

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'smsdrop-pg-follower-'));
after(() => fs.rmSync(dir, { recursive: true, force: true }));

interface Node {
  pool: pg.Pool;
  run: IntakeRun;
  turns: IntakeTurns;
}

function nodeOn(url: string): Node {
  const pool = openPool(url, 4);
  after(() => pool.end());
  const reads = pgReadStore(pool);
  const files = pgFileStore(pool);
  return {
    pool,
    run: { files, sentBefore: async (id: number) => reads.sentBefore(id, WINDOW) },
    turns: new IntakeTurns(files),
  };
}

/** As the pipeline reads a file: its turn (asked with its size), then the intake in it. */
async function readInTurn(node: Node, csv: string, more: Partial<IntakeRun> = {}): Promise<void> {
  const over = await node.turns.next(undefined, { bytes: fs.statSync(csv).size });
  try {
    await intakeFile(csv, { ...node.run, ...more });
  } finally {
    over();
  }
}

/** 100 rows of numbers and a message the large files never hold. */
function urgentCsv(): string {
  const csv = path.join(dir, 'urgent.csv');
  const lines = ['mobile,template,var1,note'];
  for (let i = 0; i < 100; i++) lines.push(`${13900000000 + i},8,urgent,note ${i}`);
  fs.writeFileSync(csv, lines.join('\n') + '\n');
  return csv;
}

/**
 * The large file read on `a`, slowly (a pause after each chunk) until `whileSlow` says otherwise;
 * `started` resolves once its first chunk is written. `finished` tells whether it has ended.
 */
function readLarge(a: Node, csv: string, whileSlow: () => boolean) {
  let started!: () => void;
  const first = new Promise<void>((resolve) => (started = resolve));
  let ended = false;
  const reading = readInTurn(a, csv, {
    afterChunk: async (chunks) => {
      if (chunks === 1) started();
      if (whileSlow()) await sleep(20);
    },
  }).finally(() => (ended = true));
  return { started: first, reading, finished: () => ended };
}

/** (message, number) pairs planned to be sent by more than one row. */
const PLANNED_TWICE = `SELECT g.app_id, g.template_id, g.datas, r.phone, count(*)::int AS n
  FROM rows r JOIN groups g ON g.id = r.group_id
  WHERE r.intake = 'valid' AND r.duplicate_of IS NULL
  GROUP BY 1, 2, 3, 4 HAVING count(*) > 1`;

describe('a small file beside a large one on another node', { skip: postgresMissing() }, () => {
  const pg15 = usePostgres();
  async function database(): Promise<string> {
    const url = await pg15.cluster.freshDatabase();
    const pool = openPool(url, 1);
    await migratePostgres(pool);
    await pool.end();
    return url;
  }

  test('is read while the large file is still being read', async () => {
    const url = await database();
    const [a, b] = [nodeOn(url), nodeOn(url)];
    const large = path.join(dir, 'large.csv');
    writeCsv(large, 8000);
    let smallRead = false;
    const l = readLarge(a, large, () => !smallRead);
    await l.started;
    await readInTurn(b, urgentCsv());
    smallRead = true;
    const largeStillRead = !l.finished();
    await l.reading;
    assert.equal(largeStillRead, true, 'the small file was read before the large one ended');
    const { rows } = await a.pool.query<{ name: string; status: string; repeats: number }>(
      'SELECT name, status, repeats FROM files ORDER BY id',
    );
    assert.deepEqual(
      rows.map((r) => [r.name, r.status, r.repeats]),
      [
        ['large.csv', 'sending', 0],
        ['urgent.csv', 'sending', 0],
      ],
    );
  });

  test('that shares rows with the large one gives way, and is read again after it', async () => {
    const url = await database();
    const [a, b] = [nodeOn(url), nodeOn(url)];
    const large = path.join(dir, 'large-shared.csv');
    writeCsv(large, 8000);
    const shared = path.join(dir, 'shared.csv');
    writeCsv(shared, 100); // the large file's first rows: committed before the small one is read
    let sharedDone = false;
    const l = readLarge(a, large, () => !sharedDone);
    await l.started;
    const gaveWay = await readInTurn(b, shared).then(
      () => false,
      (error: unknown) => {
        if (!hasCode(error, 'E_INTAKE_TURN_YIELDED')) throw error;
        return true;
      },
    );
    sharedDone = true;
    assert.equal(gaveWay, true, 'the small file met rows of the file still being read');
    const { rows: records } = await b.pool.query<{ id: number }>(
      "SELECT id FROM files WHERE name = 'shared.csv'",
    );
    // Read again as the pipeline does: in the turn that waits for the large file.
    const over = await b.turns.next();
    try {
      await intakeFile(shared, { ...b.run, fileId: records[0]!.id });
    } finally {
      over();
    }
    assert.equal(l.finished(), true, 'read again only once the large file was read');
    await l.reading;
    const twice = await a.pool.query(PLANNED_TWICE);
    assert.deepEqual(twice.rows, [], 'no message planned for a number by both files');
    const { rows } = await a.pool.query<{ name: string; repeats: number }>(
      'SELECT name, repeats FROM files ORDER BY id',
    );
    assert.equal(rows[0]!.repeats, 0);
    assert.ok(rows[1]!.repeats > 0, `the small file counts repeats (${rows[1]!.repeats})`);
  });
});
