// The intake turn across nodes (src/pgjournal/intakeTurn.ts, src/pipeline/turns.ts): two nodes on
// one PostgreSQL journal read files one at a time, so that the second file's rows are checked
// against the first's (the repeat window); the turn's connection carries the intake's
// transactions, so a turn lost with its connection takes its uncommitted rows with it.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { after, describe, test } from 'node:test';
import type pg from 'pg';
import { errorCode } from '../../src/errors.js';
import { pgFileStore } from '../../src/pgjournal/files.js';
import { INTAKE_TURN_LOCK } from '../../src/pgjournal/intakeTurn.js';
import { migratePostgres, openPool } from '../../src/pgjournal/schema.js';
import { pgReadStore } from '../../src/pgjournal/readStore.js';
import { IntakeTurns } from '../../src/pipeline/turns.js';
import { postgresMissing, usePostgres } from './cluster.js';
import { intakeFile, type IntakeRun, writeCsv } from './intakeRun.js';

const WINDOW = { ms: 86_400_000, text: '24h' };

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'smsdrop-pg-turn-'));
after(() => fs.rmSync(dir, { recursive: true, force: true }));

function csvFile(name: string, rows: number, shift = 0): string {
  const csv = path.join(dir, name);
  writeCsv(csv, rows, shift);
  return csv;
}

/** A node: its own pool, FileStore and IntakeTurns, as a daemon's runtime makes them. */
function nodeOn(url: string): { pool: pg.Pool; run: IntakeRun; turns: IntakeTurns } {
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

/** The pipeline's order: the turn, then the repeat window's look-up and the intake inside it. */
async function readInTurn(
  node: ReturnType<typeof nodeOn>,
  csv: string,
  more: Partial<IntakeRun> = {},
): Promise<number> {
  const over = await node.turns.next();
  try {
    return (await intakeFile(csv, { ...node.run, ...more })).fileId;
  } finally {
    over();
  }
}

/** (message, number) pairs planned to be sent by more than one row. */
const PLANNED_TWICE = `SELECT g.app_id, g.template_id, g.datas, r.phone, count(*)::int AS n
  FROM rows r JOIN groups g ON g.id = r.group_id
  WHERE r.intake = 'valid' AND r.duplicate_of IS NULL
  GROUP BY 1, 2, 3, 4 HAVING count(*) > 1`;

describe('the intake turn across nodes', { skip: postgresMissing() }, () => {
  const pg15 = usePostgres();
  async function database(): Promise<string> {
    const url = await pg15.cluster.freshDatabase();
    const pool = openPool(url, 1);
    await migratePostgres(pool);
    await pool.end();
    return url;
  }

  test('two nodes reading files that share rows at once: the second counts repeats', async () => {
    const url = await database();
    const [a, b] = [nodeOn(url), nodeOn(url)];
    const first = csvFile('first.csv', 1200);
    const second = csvFile('second.csv', 1200, 600); // its first half is the first's second half
    let bAsked!: () => void;
    const bAsks = new Promise<void>((resolve) => (bAsked = resolve));
    // a is under way (a chunk read, nothing committed: the first commit comes at 5,000 rows) when
    // b asks for its turn: without a turn shared by the nodes, b reads beside a, missing a's rows.
    const readA = readInTurn(a, first, {
      afterChunk: async (chunks) => {
        if (chunks !== 1) return;
        await bAsks;
        await sleep(300);
      },
    });
    const readB = (async () => {
      while (!(await a.pool.query('SELECT 1 FROM files')).rowCount) await sleep(20);
      bAsked();
      return readInTurn(b, second);
    })();
    await Promise.all([readA, readB]);
    const twice = await a.pool.query(PLANNED_TWICE);
    assert.deepEqual(twice.rows, [], 'no message planned for a number by both files');
    const { rows } = await a.pool.query<{ name: string; repeats: number }>(
      'SELECT name, repeats FROM files ORDER BY id',
    );
    assert.equal(rows[0]!.repeats, 0);
    assert.ok(rows[1]!.repeats > 0, `the second file counts repeats (${rows[1]!.repeats})`);
  });

  test('a turn lost with its connection takes its uncommitted rows with it, and passes on', async () => {
    const url = await database();
    const [a, b] = [nodeOn(url), nodeOn(url)];
    const overA = await a.turns.next();
    const stopB = new AbortController();
    let bHasIt = false;
    const bTurn = b.turns.next(stopB.signal).then((over) => {
      bHasIt = true;
      return over;
    });
    try {
      // a writes its first chunks inside its turn; its connection is then cut (a node's host lost)
      const readA = intakeFile(csvFile('cut.csv', 3000), {
        ...a.run,
        afterChunk: async (chunks) => {
          if (chunks !== 2) return;
          await sleep(200);
          assert.equal(bHasIt, false, 'b waits while a holds the turn');
          const killed = await b.pool.query(
            `SELECT pg_terminate_backend(pid) FROM pg_locks
             WHERE locktype = 'advisory' AND granted
               AND ((classid::bigint << 32) | objid::bigint) = $1`,
            [INTAKE_TURN_LOCK.toString()],
          );
          assert.equal(killed.rowCount, 1, 'one connection holds the turn');
        },
      });
      await assert.rejects(
        readA,
        (e) => errorCode(e) === 'E_JOURNAL_WRITE',
        "a's intake ran on the turn's connection, and failed with it",
      );
      const overB = await bTurn;
      overB();
      const rows = await b.pool.query<{ n: number }>('SELECT count(*)::int AS n FROM rows');
      assert.equal(rows.rows[0]!.n, 0, "nothing of a's intake was committed");
    } finally {
      overA();
      stopB.abort();
      (await bTurn)();
    }
  });

  test('a stop ends the wait for the turn', async () => {
    const url = await database();
    const [a, b] = [nodeOn(url), nodeOn(url)];
    const overA = await a.turns.next();
    const stop = new AbortController();
    const waiting = b.turns.next(stop.signal);
    await sleep(300);
    stop.abort();
    const overB = await waiting; // an empty turn: the caller looks at its stop
    overB();
    overA();
    const again = await b.turns.next();
    again();
  });
});
