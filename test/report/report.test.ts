// `smsdrop report` and `smsdrop status`: FILE resolution, the three formats, failures with their
// class and what to do, and what the daemon is doing now, all read from the journal.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { UsageError } from '../../src/errors.js';
import { openWriter } from '../../src/journals/index.js';
import { requireJournal, resolveFile } from '../../src/report/common.js';
import { fileReportCsv } from '../../src/report/render.js';
import { readStatus, renderStatus } from '../../src/report/status.js';
import { adviceFor, FILE_COLUMNS, fileReport } from '../../src/report/summary.js';
import { cleanUp, runCli, sendCsv, simulator, tempDir, writeCsvFile } from './helpers.js';

after(cleanUp);

describe('report', () => {
  let dir: string;
  let dataDir: string;
  let sha: string;

  before(async () => {
    dir = tempDir();
    dataDir = path.join(dir, 'data');
    const sim = await simulator({ blocked: ['13800000002'] });
    const lines = [
      'phone,templateId,data1,data2',
      '13800000001,1,a,b',
      '13800000002,1,a,b',
      '13800000003,1,a,b',
      '1,1,a,b',
      '13800000001,1,a,b',
    ];
    const first = await sendCsv(dataDir, sim, writeCsvFile(dir, '=campaign.csv', lines), {
      maxPerRequest: 1,
    });
    sha = first.sha256!;
    // Another file of the same name, with other bytes: the name alone is ambiguous.
    fs.mkdirSync(path.join(dir, 'later'));
    await sendCsv(
      dataDir,
      sim,
      writeCsvFile(path.join(dir, 'later'), 'same.csv', [
        'phone,templateId,data1,data2',
        '13800000009,1,a,b',
      ]),
    );
    await sendCsv(
      dataDir,
      sim,
      writeCsvFile(dir, 'same.csv', ['phone,templateId,data1,data2', '13800000008,1,a,b']),
    );
  });

  it('FILE is an id, a name, a path or a sha256 prefix; unknown and ambiguous ones are usage errors', async () => {
    const db = await requireJournal({ dataDir });
    try {
      assert.equal((await resolveFile(db, '1')).name, '=campaign.csv');
      assert.equal((await resolveFile(db, '=campaign.csv')).id, 1);
      assert.equal((await resolveFile(db, path.join(dir, '=campaign.csv'))).id, 1);
      assert.equal((await resolveFile(db, sha.slice(0, 8).toUpperCase())).id, 1);
      await assert.rejects(
        () => resolveFile(db, sha.slice(0, 5)),
        UsageError,
        'a prefix shorter than 6 is not taken',
      );
      await assert.rejects(() => resolveFile(db, 'nope.csv'), /no file "nope\.csv"/);
      await assert.rejects(
        () => resolveFile(db, 'same.csv'),
        (err: Error) =>
          err instanceof UsageError &&
          /matches 2 files: id 2 .*; id 3 .*Give the id/.test(err.message),
      );
    } finally {
      db.close();
    }
  });

  it('failures by code with class and what to do; the CSV lines add up to the rows', async () => {
    const db = await requireJournal({ dataDir });
    try {
      const r = await fileReport(db, 1);
      assert.deepEqual([r.rows, r.accepted, r.failed, r.invalid, r.duplicates], [5, 2, 1, 1, 1]);
      assert.equal(r.failures.length, 1);
      assert.deepEqual(
        { ...r.failures[0], what_to_do: undefined, sample_message: undefined },
        {
          status: 'failed',
          status_code: '160034',
          class: 'number-rejected',
          count: 1,
          what_to_do: undefined,
          sample_message: undefined,
        },
      );
      assert.match(r.failures[0]!.what_to_do, /blacklist.*smsdrop retry 1 --failed/);
      assert.equal(r.invalid_reasons[0]!.count, 1);
      assert.equal(r.timing.requests, 3);
      assert.ok(r.timing.first_send! <= r.timing.last_send!);
      const csv = fileReportCsv(r);
      assert.equal(
        csv.rows.reduce((n, row) => n + Number(row[5]), 0),
        r.rows,
      );
    } finally {
      db.close();
    }
  });

  it('plain-language advice: unknown rows say check first; not-sent rows say resend', () => {
    assert.match(
      adviceFor('unknown', null, 7).what_to_do,
      /may have been sent.*smsdrop retry 7 --unknown/,
    );
    assert.match(
      adviceFor('unknown', '160050', 7).what_to_do,
      /may have been sent \(160050: .*\).*--unknown/,
    );
    assert.equal(adviceFor('failed', null, 7).class, 'not sent');
    assert.equal(adviceFor('failed', '112311', 7).class, 'batch-rejected');
    assert.match(
      adviceFor('failed', '112311', 7).what_to_do,
      /^template not found: check the templateId\. Resending unchanged cannot help/,
    );
  });

  it('CLI: JSON keys are those of v_files; CSV is UTF-8 with BOM and guarded; the table explains failures', async () => {
    // Independent runs, in parallel: each CLI start costs a second or two.
    const [json, csv, one, oneJsonRun] = await Promise.all([
      runCli(['report', '--format', 'json'], { dataDir }),
      runCli(['report', '--format', 'csv'], { dataDir }),
      runCli(['report', '1'], { dataDir }),
      runCli(['report', sha.slice(0, 10), '--format', 'json'], { dataDir }),
    ]);
    assert.equal(json.code, 0, json.stderr);
    const files = JSON.parse(json.stdout) as Array<Record<string, unknown>>;
    assert.equal(files.length, 3);
    assert.deepEqual(Object.keys(files[0]!), [...FILE_COLUMNS]);

    assert.equal(csv.code, 0, csv.stderr);
    assert.ok(
      csv.stdout.startsWith(
        `\uFEFF${FILE_COLUMNS.join(',')}\r\n1,'=campaign.csv,${sha},done,5,1,1,2,1,0,0,3,`,
      ),
      csv.stdout,
    );

    assert.equal(one.code, 0, one.stderr);
    assert.match(one.stdout, /160034 +1 +number-rejected/);
    assert.match(one.stdout, /^160034: number on a blacklist/m);
    assert.match(one.stdout, /requests 3 {2}first send \d{4}-/);

    const oneJson = JSON.parse(oneJsonRun.stdout) as Record<string, unknown>;
    assert.deepEqual(Object.keys(oneJson), [
      ...FILE_COLUMNS,
      'repeats',
      'failures',
      'invalid_reasons',
      'timing',
    ]);
  });

  it('CLI: bad arguments exit 2 with a clear message', async () => {
    const cases: Array<[string[], RegExp]> = [
      [['report', 'nope.csv'], /no file "nope\.csv"/],
      [['report', 'same.csv'], /matches 2 files/],
      [['report', '--format', 'xml'], /--format expects table, json, csv; got "xml"/],
    ];
    const runs = await Promise.all(cases.map(([args]) => runCli(args, { dataDir })));
    cases.forEach(([args, message], i) => {
      assert.equal(runs[i]!.code, 2, args.join(' '));
      assert.match(runs[i]!.stderr, message);
    });
  });
});

describe('status', () => {
  it('a file paused by an account-fatal answer: progress, no ETA, and why it is paused', async () => {
    const dir = tempDir();
    const dataDir = path.join(dir, 'data');
    const sim = await simulator({
      faults: [{ kind: 'status', statusCode: '111142', everyNth: 1 }],
    });
    const result = await sendCsv(
      dataDir,
      sim,
      writeCsvFile(dir, 'p.csv', [
        'phone,templateId,data1,data2',
        '13800000001,1,a,b',
        '13800000002,1,a,b',
        'x,1,a,b',
      ]),
    );
    assert.equal(result.outcome, 'paused');

    const db = await requireJournal({ dataDir });
    try {
      const now = Date.now();
      const s = await readStatus(db, dataDir, now);
      assert.equal(s.process, null);
      assert.deepEqual(
        s.paused && { source: s.paused.source, reason: s.paused.reason, code: s.paused.code },
        {
          source: 'last answer',
          reason: '111142: account balance insufficient: top up the account',
          code: 'E_PROVIDER_BALANCE',
        },
      );
      assert.equal(s.files.length, 1);
      assert.deepEqual(
        {
          ...s.files[0],
          rows_per_second: undefined,
          sending_seconds: undefined,
          since_taken_seconds: undefined,
        },
        {
          id: 1,
          name: 'p.csv',
          status: 'sending',
          start_at: null,
          rows: 3,
          sendable: 2,
          settled: 0,
          pending: 2,
          progress: 0,
          rows_per_second: undefined,
          eta_seconds: null,
          in_flight_requests: 0,
          in_flight_numbers: 0,
          estimated: false,
          being_sent: false,
          sending_seconds: undefined,
          since_taken_seconds: undefined,
        },
      );
      // One answer, over the time since its request started (at least a second, at most a minute).
      const started = Date.parse((await db.requestTiming(1)).first_send!);
      assert.equal(
        s.rate.requests_per_second,
        Math.round(100 / Math.min(60, Math.max(1, (now - started) / 1000))) / 100,
      );
      assert.match(
        renderStatus(s),
        /PAUSED since .*: E_PROVIDER_BALANCE: 111142.*\n[\s\S]*p\.csv[\s\S]*not moving/,
      );
    } finally {
      db.close();
    }
  });

  it('while the daemon runs, its own record says whether it is paused', async () => {
    const dataDir = path.join(tempDir(), 'data');
    fs.mkdirSync(dataDir);
    // This test's process stands for the daemon: it holds the data directory and writes its record.
    const { handle: writer } = await openWriter(
      { dataDir },
      { role: 'smsdrop run', synchronous: 'normal', reqIdOn: false, onLost: () => {} },
    );
    try {
      await writer.daemon.setPause({
        paused: '111139: account suspended: contact the provider',
        code: 'E_PROVIDER_ACCOUNT',
      });
      const db = await requireJournal({ dataDir });
      try {
        let s = await readStatus(db, dataDir);
        assert.equal(s.process?.pid, process.pid);
        assert.equal(s.process?.what, 'smsdrop run');
        assert.equal(s.paused?.source, 'daemon');
        assert.equal(s.paused?.reason, '111139: account suspended: contact the provider');
        assert.equal(s.paused?.code, 'E_PROVIDER_ACCOUNT');
        assert.match(renderStatus(s), /PAUSED since .*: E_PROVIDER_ACCOUNT: 111139: account/);
        const since = s.paused?.since;
        await writer.daemon.setPause({
          paused: '111142: account balance insufficient: top up the account',
        });
        s = await readStatus(db, dataDir);
        assert.equal(s.paused?.since, since, 'still the same pause');
        await writer.daemon.setPause({ paused: null });
        assert.equal((await readStatus(db, dataDir)).paused, null);
        // A message window holding requests is not a pause: said apart, and cleared by its own
        // event.
        await writer.daemon.setWaiting(
          'message window 10000/1h used up; the next request starts at 2026-11-25T09:00:00.000Z',
        );
        s = await readStatus(db, dataDir);
        assert.deepEqual(
          [s.paused, s.waiting],
          [
            null,
            'message window 10000/1h used up; the next request starts at 2026-11-25T09:00:00.000Z',
          ],
        );
        assert.match(
          renderStatus(s),
          /WAITING: message window 10000\/1h used up; the next request starts at 2026-11-25T09:00:00.000Z/,
        );
        await writer.daemon.setPause({
          paused: '111142: account balance insufficient: top up the account',
        });
        assert.match(
          renderStatus(await readStatus(db, dataDir)),
          /PAUSED since .*111142/,
          'a pause says more than a wait',
        );
        await writer.daemon.setPause({ paused: null });
        await writer.daemon.setWaiting(null);
        assert.equal((await readStatus(db, dataDir)).waiting, null);
      } finally {
        db.close();
      }
    } finally {
      await writer.close();
    }
  });

  it('CLI: status --json works with no journal at all', async () => {
    const dataDir = path.join(tempDir(), 'data');
    const run = await runCli(['status', '--json'], { dataDir });
    assert.equal(run.code, 0, run.stderr);
    const s = JSON.parse(run.stdout) as { files: unknown[]; paused: unknown; process: unknown };
    assert.deepEqual([s.files, s.paused, s.process], [[], null, null]);
  });
});
