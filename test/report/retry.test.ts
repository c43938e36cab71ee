// `smsdrop retry`: an explicit resend of the failed (or unknown) rows only, as new requests, with
// the earlier outcome kept; refused beside a running sender; unknown rows only when confirmed.
import assert from 'node:assert/strict';
import path from 'node:path';
import { after, describe, it } from 'node:test';
import { clearOfDayChange } from '../dayChange.js';
import { acquireLock } from '../../src/datadir/lock.js';
import { retryRows } from '../../src/pipeline/retry.js';
import {
  acceptedNumbers,
  cleanUp,
  runCli,
  sendCsv,
  sender,
  simulator,
  tempDir,
  writeCsvFile,
} from './helpers.js';
import { withSqliteFile } from '../sqliteFile.js';

after(cleanUp);

const BLOCKED = ['13800000003', '13800000007'];
const LINES = [
  'phone,templateId,data1,data2',
  ...Array.from({ length: 10 }, (_, i) => `1380000000${i},1,code,${i % 2}`),
  '999,1,code,0',
];

/** File 1's line of v_files, read on the journal's file as the sqlite3 shell reads it. */
function countsOf(dataDir: string): Record<string, unknown> {
  return withSqliteFile(
    dataDir,
    (db) =>
      db
        .prepare(
          'SELECT status, rows, invalid, duplicates, accepted, failed, unknown, pending FROM v_files WHERE id = 1',
        )
        .get() as Record<string, unknown>,
  );
}

describe('retry --failed', () => {
  it('after the block is lifted, resends exactly the failed rows, once, and keeps their earlier outcome', async () => {
    const dir = tempDir();
    const dataDir = path.join(dir, 'data');
    const blocking = await simulator({ blocked: BLOCKED });
    await sendCsv(dataDir, blocking, writeCsvFile(dir, 'c.csv', LINES), { maxPerRequest: 4 });
    assert.deepEqual(countsOf(dataDir), {
      status: 'done',
      rows: 11,
      invalid: 1,
      duplicates: 0,
      accepted: 8,
      failed: 2,
      unknown: 0,
      pending: 0,
    });

    const open = await simulator();
    const s = await sender(dataDir, open, { maxPerRequest: 4 });
    const result = await retryRows(s.ctx, s.stores, 1, ['failed']);
    assert.equal(result.retry.rows, 2);
    assert.equal(result.sent?.state, 'finished');
    assert.deepEqual(result.outcome, { rows: 2, accepted: 2, failed: 0, unknown: 0, pending: 0 });
    assert.deepEqual(
      acceptedNumbers(open).sort(),
      BLOCKED,
      'only the failed rows were sent, each once',
    );
    assert.deepEqual(countsOf(dataDir), {
      status: 'done',
      rows: 11,
      invalid: 1,
      duplicates: 0,
      accepted: 10,
      failed: 0,
      unknown: 0,
      pending: 0,
    });

    withSqliteFile(dataDir, (db) => {
      const history = db
        .prepare(
          // a retried batch's numbers went to the batch made from it (a batch of one number
          // keeps it in its row only, which follows it)
          `SELECT n.phones, b.status_code FROM batches b JOIN batches c ON c.parent_id = b.id
           JOIN batch_numbers n ON n.batch_id = c.id WHERE b.state = 'retried' ORDER BY n.phones`,
        )
        .all();
      assert.deepEqual(
        history,
        BLOCKED.map((phones) => ({ phones, status_code: '160034' })),
        'the old batches keep their outcome',
      );
      const rejected = db
        .prepare("SELECT count(*) FROM attempts WHERE outcome = 'rejected:number-rejected'")
        .pluck()
        .get() as number;
      assert.equal(
        rejected,
        blocking.requestCount - blocking.records.length,
        'the earlier refused attempts are still in the journal',
      );
      const attempts = db
        .prepare('SELECT attempts FROM v_recipients WHERE phone = ?')
        .pluck()
        .get(BLOCKED[0]);
      assert.equal(attempts, 4, 'three earlier requests and the retry');
    });

    const again = await retryRows(s.ctx, s.stores, 1, ['failed']);
    assert.equal(again.retry.rows, 0);
    assert.equal(acceptedNumbers(open).length, 2, 'a second retry sends nothing');
  });

  it('does not resend a number another file sent the same message to since (the failed rows exported and dropped back first)', async () => {
    const dir = tempDir();
    const dataDir = path.join(dir, 'data');
    const capped = ['13800000002', '13800000005']; // over their daily cap: failed, not suppressed
    await sendCsv(dataDir, await simulator({ capped }), writeCsvFile(dir, 'c.csv', LINES), {
      maxPerRequest: 4,
      rateLimitMaxDeferrals: 0,
    });
    assert.deepEqual(countsOf(dataDir), {
      status: 'done',
      rows: 11,
      invalid: 1,
      duplicates: 0,
      accepted: 8,
      failed: 2,
      unknown: 0,
      pending: 0,
    });
    const open = await simulator();
    // The operator sends the failed rows as a file of their own (an export of them, say)...
    await sendCsv(dataDir, open, writeCsvFile(dir, 'fix.csv', [LINES[0]!, LINES[3]!, LINES[6]!]));
    assert.deepEqual(acceptedNumbers(open).sort(), capped);
    // ...then also asks for a retry of the first file: nothing is sent twice.
    const s = await sender(dataDir, open, { maxPerRequest: 4 });
    const result = await retryRows(s.ctx, s.stores, 1, ['failed']);
    assert.deepEqual([result.retry.rows, result.retry.repeats], [0, 2]);
    assert.deepEqual(acceptedNumbers(open).sort(), capped, 'each number got the message once');
    assert.deepEqual(countsOf(dataDir), {
      status: 'done',
      rows: 11,
      invalid: 1,
      duplicates: 2,
      accepted: 8,
      failed: 0,
      unknown: 0,
      pending: 0,
    });
    const why = withSqliteFile(
      dataDir,
      (db) =>
        db
          .prepare(
            "SELECT status_msg FROM v_recipients WHERE file_id = 1 AND phone = '13800000002'",
          )
          .pluck()
          .get() as string,
    );
    assert.match(why, /goes with another file .*: line 2 of fix\.csv \(file 2\)/);
  });

  it('CLI: when every failed row turned out to be a repeat, nothing is sent and the exit status is 0', async () => {
    const dir = tempDir();
    const dataDir = path.join(dir, 'data');
    const capped = ['13800000002', '13800000005'];
    await sendCsv(dataDir, await simulator({ capped }), writeCsvFile(dir, 'c.csv', LINES), {
      maxPerRequest: 4,
      rateLimitMaxDeferrals: 0,
    });
    const open = await simulator();
    await sendCsv(dataDir, open, writeCsvFile(dir, 'fix.csv', [LINES[0]!, LINES[3]!, LINES[6]!]));
    const run = await runCli(['retry', '1', '--failed', '--json'], { dataDir, sim: open });
    assert.equal(run.code, 0, run.stdout + run.stderr);
    assert.equal((JSON.parse(run.stdout) as { repeats: number }).repeats, 2);
    assert.equal(acceptedNumbers(open).length, 2, 'nothing sent twice');
  });

  it('CLI: failed rows another file holds but has not sent (it paused) are not resent, and retry exits 3 naming that file', async () => {
    const capped = ['13800000002', '13800000005'];
    /**
     * File 1 with the capped numbers failed, then the export of them (file 2) paused at once (a
     * wrong token): it holds them, unsent.
     */
    const setUp = async () => {
      const dir = tempDir();
      const dataDir = path.join(dir, 'data');
      await sendCsv(dataDir, await simulator({ capped }), writeCsvFile(dir, 'c.csv', LINES), {
        maxPerRequest: 4,
        rateLimitMaxDeferrals: 0,
      });
      const open = await simulator();
      const paused = await sendCsv(
        dataDir,
        open,
        writeCsvFile(dir, 'fix.csv', [LINES[0]!, LINES[3]!, LINES[6]!]),
        { authToken: 'wr0ngtoken000000000000000000000' },
      );
      assert.equal(paused.outcome, 'paused');
      return { dataDir, open };
    };
    const json = await setUp();
    const run = await runCli(['retry', '1', '--failed', '--json'], {
      dataDir: json.dataDir,
      sim: json.open,
    });
    assert.equal(
      run.code,
      3,
      `not done: nothing has sent those numbers yet\n${run.stdout}${run.stderr}`,
    );
    const summary = JSON.parse(run.stdout) as { repeats: number; waitingIn: unknown };
    assert.equal(summary.repeats, 2);
    assert.deepEqual(summary.waitingIn, [{ id: 2, name: 'fix.csv', status: 'sending', rows: 2 }]);
    assert.deepEqual(
      acceptedNumbers(json.open),
      [],
      'not sent by the retry: the paused file would send them again',
    );

    const text = await setUp();
    const shown = await runCli(['retry', '1', '--failed'], {
      dataDir: text.dataDir,
      sim: text.open,
    });
    assert.equal(shown.code, 3);
    assert.match(
      shown.stdout,
      /^waiting +Not sent yet, waiting in fix\.csv \(id 2\): 2: they go when that file goes on \(give it again, or, its bytes gone or changed, smsdrop resume ID\)$/m,
    );
  });

  it('CLI: resends the failed rows and exits 0 when all were accepted', async () => {
    const dir = tempDir();
    const dataDir = path.join(dir, 'data');
    await sendCsv(
      dataDir,
      await simulator({ blocked: BLOCKED }),
      writeCsvFile(dir, 'c.csv', LINES),
    );
    const open = await simulator();
    const run = await runCli(['retry', 'c.csv', '--failed', '--json'], { dataDir, sim: open });
    assert.equal(run.code, 0, run.stderr);
    const summary = JSON.parse(run.stdout) as {
      state: string;
      retried: Record<string, number>;
      file: Record<string, number>;
    };
    assert.equal(summary.state, 'finished');
    assert.deepEqual(summary.retried, { rows: 2, accepted: 2, failed: 0, unknown: 0, pending: 0 });
    assert.equal(summary.file.accepted, 10);
    assert.deepEqual(acceptedNumbers(open).sort(), BLOCKED);
    assert.ok(!run.stderr.includes('rep0rt5ecret'), 'the auth token is never printed');
  });

  it('CLI: refuses with exit 2 while another smsdrop process holds the data directory', async () => {
    const dir = tempDir();
    const dataDir = path.join(dir, 'data');
    await sendCsv(
      dataDir,
      await simulator({ blocked: BLOCKED }),
      writeCsvFile(dir, 'c.csv', LINES),
    );
    const open = await simulator();
    const lock = acquireLock(dataDir, 'smsdrop daemon (test)');
    try {
      const run = await runCli(['retry', '1', '--failed'], { dataDir, sim: open });
      assert.equal(run.code, 2);
      assert.match(run.stderr, /another smsdrop process .*smsdrop daemon \(test\).*retry sends/);
    } finally {
      lock.release();
    }
    assert.equal(open.requestCount, 0);
    assert.equal(countsOf(dataDir).failed, 2);
  });

  it('CLI: bad arguments exit 2', async () => {
    const dir = tempDir();
    const dataDir = path.join(dir, 'data');
    await sendCsv(dataDir, await simulator(), writeCsvFile(dir, 'c.csv', LINES));
    const [noFlag, noFile] = await Promise.all([
      runCli(['retry', '1'], { dataDir }),
      runCli(['retry', '42', '--failed'], { dataDir }),
    ]);
    assert.equal(noFlag.code, 2);
    assert.match(noFlag.stderr, /--failed, --unknown or both/);
    assert.equal(noFile.code, 2);
    assert.match(noFile.stderr, /no file "42"/);
  });
});

describe('retry --unknown', () => {
  /**
   * reqId off and every answer cut after the provider accepted: all rows unknown, all delivered.
   */
  async function unknownRun() {
    const dir = tempDir();
    const dataDir = path.join(dir, 'data');
    const cutting = await simulator({ faults: [{ kind: 'cut-after-accept', everyNth: 1 }] });
    await sendCsv(
      dataDir,
      cutting,
      writeCsvFile(dir, 'u.csv', [
        'phone,templateId,data1,data2',
        '13800000001,1,a,b',
        '13800000002,1,a,b',
      ]),
      { reqId: false },
    );
    assert.equal(countsOf(dataDir).unknown, 2);
    assert.equal(acceptedNumbers(cutting).length, 2, 'the provider did take them');
    return { dataDir, open: await simulator() };
  }

  it('without a terminal and without --yes: refused with exit 2, nothing sent', async () => {
    const { dataDir, open } = await unknownRun();
    const run = await runCli(['retry', '1', '--unknown'], {
      dataDir,
      sim: open,
      env: { SMSDROP_REQ_ID: 'off' },
    });
    assert.equal(run.code, 2);
    assert.match(run.stderr, /may already have arrived.*add --yes/s);
    assert.equal(open.requestCount, 0);
    assert.equal(countsOf(dataDir).unknown, 2);
  });

  /**
   * reqId on, one attempt allowed, every answer cut after the provider accepted: all delivered, and
   * sending pauses as for an outage (nothing answers). Run again with reqId switched off, the
   * batches in doubt cannot be resent safely: all rows unknown, their attempts all under their
   * reqId. The provider's memory of reqIds is kept in a record file, as across its restarts.
   */
  async function unknownWithReqIdRun() {
    const dir = tempDir();
    const dataDir = path.join(dir, 'data');
    const recordFile = path.join(dir, 'provider-record.jsonl');
    const cutting = await simulator({
      faults: [{ kind: 'cut-after-accept', everyNth: 1 }],
      recordFile,
    });
    const file = writeCsvFile(dir, 'k.csv', [
      'phone,templateId,data1,data2',
      '13800000001,1,a,b',
      '13800000002,1,a,c',
    ]);
    await sendCsv(dataDir, cutting, file, { maxAttempts: 1 });
    assert.equal(countsOf(dataDir).pending, 2, 'paused as for an outage');
    await sendCsv(dataDir, cutting, file, { reqId: false });
    assert.equal(countsOf(dataDir).unknown, 2);
    assert.equal(acceptedNumbers(cutting).length, 2, 'the provider did take them');
    return { dataDir, provider: await simulator({ recordFile }) };
  }

  function attemptsPerRow(dataDir: string): number[] {
    return withSqliteFile(
      dataDir,
      (db) => db.prepare('SELECT DISTINCT attempts FROM v_recipients').pluck().all() as number[],
    );
  }

  it('reqId on, the same day: resent under their own reqId without asking; the provider refuses the repeat, nothing arrives twice', async () => {
    await clearOfDayChange(60_000); // the first attempt and the retry on the same provider day
    const { dataDir, provider } = await unknownWithReqIdRun();
    const attemptsBefore = attemptsPerRow(dataDir);
    const run = await runCli(['retry', '1', '--unknown', '--json'], { dataDir, sim: provider });
    assert.equal(run.code, 0, run.stderr);
    assert.equal(provider.requestCount, 2, 'each batch asked once more');
    assert.deepEqual(
      acceptedNumbers(provider),
      [],
      'the provider refused both repeats (160054): nothing arrived twice',
    );
    assert.deepEqual(countsOf(dataDir), {
      status: 'done',
      rows: 2,
      invalid: 0,
      duplicates: 0,
      accepted: 2,
      failed: 0,
      unknown: 0,
      pending: 0,
    });
    const summary = JSON.parse(run.stdout) as { retried: Record<string, number> };
    assert.deepEqual(summary.retried, { rows: 2, accepted: 2, failed: 0, unknown: 0, pending: 0 });
    withSqliteFile(dataDir, (db) => {
      const reqIds = db
        .prepare(
          `SELECT DISTINCT coalesce(nullif(a.req_id, ''), b.req_id) FROM attempts a JOIN batches b ON b.id = a.batch_id`,
        )
        .pluck()
        .all();
      assert.equal(reqIds.length, 2, 'two batches, each under one reqId, before and after');
      assert.deepEqual(
        db.prepare('SELECT DISTINCT attempts FROM v_recipients').pluck().all(),
        attemptsBefore.map((n) => n + 1),
        'every attempt of each row stays in its history',
      );
    });
  });

  it('reqId on, but in doubt since yesterday: the provider has forgotten the reqId, so it asks, and without --yes nothing is sent', async () => {
    const { dataDir, provider } = await unknownWithReqIdRun();
    withSqliteFile(
      dataDir,
      (db) => db.prepare('UPDATE attempts SET started_at = ?').run(Date.now() - 2 * 86_400_000),
      { write: true },
    );
    const run = await runCli(['retry', '1', '--unknown'], { dataDir, sim: provider });
    assert.equal(run.code, 2);
    assert.match(run.stderr, /2 rows .*may already have arrived.*add --yes/s);
    assert.equal(provider.requestCount, 0);
    assert.equal(countsOf(dataDir).unknown, 2);
  });

  it('with --yes: resent as new requests (which is why it asks)', async () => {
    const { dataDir, open } = await unknownRun();
    const run = await runCli(['retry', '1', '--unknown', '--yes'], {
      dataDir,
      sim: open,
      env: { SMSDROP_REQ_ID: 'off' },
    });
    assert.equal(run.code, 0, run.stderr);
    assert.deepEqual(acceptedNumbers(open).sort(), ['13800000001', '13800000002']);
    assert.deepEqual(countsOf(dataDir), {
      status: 'done',
      rows: 2,
      invalid: 0,
      duplicates: 0,
      accepted: 2,
      failed: 0,
      unknown: 0,
      pending: 0,
    });
  });
});
