// `smsdrop status`'s rate and ETA for a file that started less than a minute ago: measured over
// the file's own elapsed time, not a whole minute (6 s into a run, a minute made the rate ten
// times too low and the ETA ten times too long). Read at chosen moments: no timing assertions.
import assert from 'node:assert/strict';
import path from 'node:path';
import { after, describe, it } from 'node:test';
import { requireJournal } from '../../src/report/common.js';
import { readStatus, renderStatus } from '../../src/report/status.js';
import { cleanUp, sendCsv, simulator, tempDir, writeCsvFile } from './helpers.js';

after(cleanUp);

describe('status: rate and ETA', () => {
  it('a file younger than a minute is measured over its own elapsed time; an idle one has no ETA', async () => {
    const dir = tempDir();
    const dataDir = path.join(dir, 'data');
    // One number a request, one at a time; the third answer is account-fatal: 2 accepted, 4
    // pending.
    const sim = await simulator({
      faults: [{ kind: 'status', statusCode: '111142', everyNth: 3 }],
    });
    const lines = [
      'phone,templateId,data1,data2',
      ...[1, 2, 3, 4, 5, 6].map((n) => `1380000000${n},1,a,b`),
    ];
    const result = await sendCsv(dataDir, sim, writeCsvFile(dir, 'young.csv', lines), {
      maxPerRequest: 1,
      concurrency: 1,
    });
    assert.equal(result.outcome, 'paused');
    assert.deepEqual([result.counts.accepted, result.counts.pending], [2, 4]);

    const db = await requireJournal({ dataDir });
    try {
      const fileStart = Date.parse((await db.file(1))!.started_at!);
      const firstRequest = Date.parse((await db.requestTiming(1)).first_send!);

      // 10 s after the file started: 2 rows in 10 s, not in 60. No ETA: no process sends it.
      let s = await readStatus(db, dataDir, fileStart + 10_000);
      assert.equal(s.files[0]!.rows_per_second, 0.2);
      assert.equal(s.files[0]!.being_sent, false);
      assert.equal(s.files[0]!.eta_seconds, null, 'stopped: no ETA');
      assert.equal(s.rate.rows_per_second, 0.2);
      assert.equal(
        s.rate.requests_per_second,
        Math.round((3 / ((fileStart + 10_000 - firstRequest) / 1000)) * 100) / 100,
        '3 answers since the first request',
      );

      // 40 s after: the same rows over 40 s.
      s = await readStatus(db, dataDir, fileStart + 40_000);
      assert.equal(s.files[0]!.rows_per_second, 0.05);

      // Older than a minute: the last minute, as before; with nothing in it, no rate and no ETA.
      s = await readStatus(db, dataDir, fileStart + 5 * 60_000);
      assert.deepEqual(
        [s.files[0]!.rows_per_second, s.files[0]!.eta_seconds, s.rate.requests_per_second],
        [0, null, 0],
      );

      // Times for a person are in the configured zone; the JSON keeps UTC.
      s = await readStatus(db, dataDir, Date.parse('2026-11-25T16:30:00.000Z'));
      assert.equal(s.now, '2026-11-25T16:30:00.000Z');
      assert.match(
        renderStatus(s, 'Asia/Shanghai'),
        /^smsdrop status at 2026-11-26 00:30:00 Asia\/Shanghai /,
      );
    } finally {
      db.close();
    }
  });
});
