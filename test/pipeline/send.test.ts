// `smsdrop send` end to end: the real CLI in a child process against the simulator, checked
// against what the simulator accepted, not against the program's own word.
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import iconv from 'iconv-lite';
import type { RunningSimulator } from '../../src/simulator/index.js';
import {
  CREDS,
  deliveries,
  envFor,
  messageKey,
  runCli,
  startSim,
  tempDir,
  writeCsv,
} from './helpers.js';

interface Case {
  name: string;
  content: string | Buffer;
  env?: Record<string, string>;
  /** [templateId, datas, phone] */
  expected: [string, string[], string][];
  requests: number;
  exit: number;
}

const many = Array.from({ length: 450 }, (_, i) => `139${String(i).padStart(8, '0')}`);

const CASES: Case[] = [
  {
    name: 'mixed templates with different variable counts',
    content:
      'phone,templateId,data1,data2\n13800000001,1,A,B\n13800000002,1,A,B\n13800000003,1,A,B\n13800000001,2,X,\n13800000002,2,X,\n13800000003,3,,\n',
    expected: [
      ['1', ['A', 'B'], '13800000001'],
      ['1', ['A', 'B'], '13800000002'],
      ['1', ['A', 'B'], '13800000003'],
      ['2', ['X'], '13800000001'],
      ['2', ['X'], '13800000002'],
      ['3', [], '13800000003'],
    ],
    requests: 3,
    exit: 0,
  },
  {
    name: 'a group of more than 200 numbers',
    content: `mobile,template,var1,var2\n${many.map((p) => `${p},1,sale,50%`).join('\n')}\n`,
    expected: many.map((p) => ['1', ['sale', '50%'], p]),
    requests: 3,
    exit: 0,
  },
  {
    name: 'a Chinese GB18030 Excel export',
    content: iconv.encode(
      '手机号,模板ID,参数1,参数2\r\n13800000001,1,张三,您的验证码是１２３\r\n13800000002,1,李四,欢迎\r\n',
      'gb18030',
    ),
    expected: [
      ['1', ['张三', '您的验证码是１２３'], '13800000001'],
      ['1', ['李四', '欢迎'], '13800000002'],
    ],
    requests: 2,
    exit: 0,
  },
  {
    name: 'BOM, CRLF and quoted cells with commas, quotes and line breaks',
    content:
      '\uFEFFPhone , Template_Id,DATA-1,data 2\r\n"13800000001",1,"Hello, ""world""","line1\r\nline2"\r\n13800000002,1, padded ,😀 emoji & <xml>\r\n',
    expected: [
      ['1', ['Hello, "world"', 'line1\r\nline2'], '13800000001'],
      ['1', [' padded ', '😀 emoji & <xml>'], '13800000002'],
    ],
    requests: 2,
    exit: 0,
  },
  {
    name: 'messy numbers',
    content:
      'tel,template,data1,data2\n+86 138 0000 0001,1,a,b\n0086-13800000002,1,a,b\n8613800000003,1,a,b\n(138)0000-0004,1,a,b\n１３８０００００００５,1,a,b\n13800000006.0,1,a,b\n1.38E+10,1,a,b\n12345,1,a,b\n',
    expected: [
      '13800000001',
      '13800000002',
      '13800000003',
      '13800000004',
      '13800000005',
      '13800000006',
    ].map((p) => ['1', ['a', 'b'], p]),
    requests: 1,
    exit: 3,
  },
  {
    name: 'no template column (SMSDROP_TEMPLATE_ID)',
    content: 'phone,data1,data2\n13800000001,x,y\n13800000002,x,y\n',
    env: { SMSDROP_TEMPLATE_ID: '1' },
    expected: [
      ['1', ['x', 'y'], '13800000001'],
      ['1', ['x', 'y'], '13800000002'],
    ],
    requests: 1,
    exit: 0,
  },
];

for (const format of ['json', 'xml'] as const) {
  describe(`send delivers each expected message once, in the fewest requests (${format})`, () => {
    let sim: RunningSimulator;
    before(async () => (sim = await startSim()));
    after(() => sim.close());

    for (const c of CASES) {
      it(c.name, async () => {
        const dir = tempDir();
        const file = writeCsv(dir, 'input.csv', c.content);
        const before = sim.records.length;
        const result = await runCli(
          ['send', file, '--json'],
          envFor(sim, path.join(dir, 'data'), { SMSDROP_FORMAT: format, ...c.env }),
        );
        assert.equal(result.status, c.exit, result.stderr);
        const records = sim.records.slice(before);
        const got = deliveries({ ...sim, records });
        const want = new Map(c.expected.map(([t, d, p]) => [messageKey(CREDS.appId, t, d, p), 1]));
        assert.deepEqual(got, want);
        assert.equal(records.length, c.requests);
        const s = result.json!;
        assert.equal(s.accepted, c.expected.length);
        assert.equal(s.requests, c.requests);
        assert.equal(
          Number(s.invalid) +
            Number(s.duplicates) +
            Number(s.accepted) +
            Number(s.failed) +
            Number(s.unknown) +
            Number(s.pending),
          s.rows,
        );
      });
    }
  });
}

describe('send on the same bytes again', () => {
  let sim: RunningSimulator;
  before(async () => (sim = await startSim()));
  after(() => sim.close());

  it('reports "already sent" under any name and sends nothing; --resend sends again', async () => {
    const dir = tempDir();
    const env = envFor(sim, path.join(dir, 'data'));
    const content =
      'phone,template,data1,data2\n13800000001,1,a,b\n13800000001,1,a,b\n13800000002,1,a,b\n';
    const first = await runCli(['send', writeCsv(dir, 'one.csv', content), '--json'], env);
    assert.equal(first.status, 0, first.stderr);
    assert.deepEqual([first.json!.accepted, first.json!.duplicates], [2, 1]);
    const sent = sim.records.length;
    const again = await runCli(['send', writeCsv(dir, 'renamed.csv', content), '--json'], env);
    assert.equal(again.status, 0);
    assert.equal(again.json!.status, 'already-sent');
    assert.equal(again.json!.name, 'one.csv');
    assert.equal(sim.records.length, sent);
    const resend = await runCli(['send', path.join(dir, 'renamed.csv'), '--resend', '--json'], env);
    assert.equal(resend.status, 0);
    assert.equal(resend.json!.status, 'done');
    assert.equal(sim.records.length, sent + 1);
  });

  it('writes NAME.result.csv and NAME.rejected.csv next to the file', async () => {
    const dir = tempDir();
    const file = writeCsv(
      dir,
      'list.csv',
      'phone,template,data1,data2\n13800000001,1,=cmd,b\n12345,1,a,b\n1.38E+10,1,a,b\n',
    );
    const result = await runCli(['send', file], envFor(sim, path.join(dir, 'data')));
    assert.equal(result.status, 3);
    const resultCsv = readFileSync(path.join(dir, 'list.result.csv'), 'utf8');
    assert.match(resultCsv, /^\uFEFFline,phone,normalised_phone,status/);
    assert.match(resultCsv, /\r\n2,13800000001,13800000001,accepted,"=""000000""",/);
    assert.match(resultCsv, /\r\n3,12345,,invalid,,not a mainland/);
    const rejected = readFileSync(path.join(dir, 'list.rejected.csv'), 'utf8');
    // In line order, although their reasons sort the other way (the index they are read by).
    assert.match(rejected, /\r\n3,not a mainland.*12345.*\r\n4,a spreadsheet turned.*1\.38E\+10/s);
  });

  it('writes NAME.rejected.csv as soon as the file is read, while its requests are still out', async () => {
    const slow = await startSim({ latencyMs: [4_000, 4_000] });
    try {
      const dir = tempDir();
      const file = writeCsv(
        dir,
        'slow.csv',
        'phone,template,data1,data2\n13800000001,1,a,b\n12345,1,a,b\n',
      );
      const rejected = path.join(dir, 'slow.rejected.csv');
      let ended = false;
      const run = runCli(['send', file], envFor(slow, path.join(dir, 'data'))).finally(
        () => (ended = true),
      );
      while (!ended && !existsSync(rejected)) await sleep(20);
      const seenWhileSending =
        existsSync(rejected) && !existsSync(path.join(dir, 'slow.result.csv'));
      const result = await run;
      assert.equal(result.status, 3, result.stderr);
      assert.ok(seenWhileSending, 'the rejected file came before the answer to its one request');
      assert.equal(slow.records.length, 1);
      assert.match(readFileSync(rejected, 'utf8'), /\r\n3,not a mainland.*12345/s);
    } finally {
      await slow.close();
    }
  });

  it('the rejected file keeps every cell (values of a row without a template id, cells past the header); dropped back unfixed it is refused again, fixed it sends', async () => {
    const dir = tempDir();
    const env = envFor(sim, path.join(dir, 'data'));
    const file = writeCsv(
      dir,
      'cells.csv',
      'phone,template,data1,data2,note\n13800000011,,a,5,n1\n13800000012,1,b,5,x,extra\n13800000013,1,c,5,n3\n',
    );
    assert.equal((await runCli(['send', file], env)).status, 3);
    const rejected = readFileSync(path.join(dir, 'cells.rejected.csv'), 'utf8')
      .replace(/^\uFEFF/, '')
      .split('\r\n');
    assert.equal(
      rejected[0],
      'line,reason,phone,appId,templateId,data1,data2,note,beyond the header 1',
    );
    assert.match(rejected[1]!, /^2,template id is empty[^,]*,13800000011,,,a,5,n1,$/);
    assert.match(
      rejected[2]!,
      /^3,row has 6 cells but the header has 5[^,]*,13800000012,APPtest\w*,1,b,5,x,extra$/,
    );
    // Dropped back unfixed: both refused again (nothing sent with shifted values).
    const back = writeCsv(dir, 'back.csv', rejected.join('\r\n'));
    const again = await runCli(['send', back, '--json'], env);
    assert.deepEqual([again.json!.invalid, again.json!.accepted], [2, 0]);
    assert.match(
      readFileSync(path.join(dir, 'back.rejected.csv'), 'utf8'),
      /row still has 1 cell\(s\) beyond the header/,
    );
    // Fixed: template id filled in, the note moved into its column and the cell past it emptied.
    const fixed = [
      rejected[0],
      rejected[1]!.replace(',13800000011,,,a', ',13800000011,,1,a'),
      rejected[2]!.replace(',b,5,x,extra', ',"b,5",x,extra,'),
    ].join('\r\n');
    const sent = await runCli(['send', writeCsv(dir, 'fixed.csv', fixed), '--json'], env);
    assert.deepEqual([sent.json!.accepted, sent.json!.invalid], [2, 0], JSON.stringify(sent.json));
    assert.ok(
      sim.records.some((r) => r.to.includes('13800000012') && r.datas.join('|') === 'b,5|x'),
    );
  });
});

describe('send: dry run, bad input and exit status', () => {
  let sim: RunningSimulator;
  before(async () => (sim = await startSim()));
  after(() => sim.close());

  it('--dry-run prints the plan, sends nothing and leaves no pending work', async () => {
    const dir = tempDir();
    const file = writeCsv(
      dir,
      'plan.csv',
      `phone,template,data1,data2\n${many.map((p) => `${p},1,a,b`).join('\n')}\n`,
    );
    const result = await runCli(
      ['send', file, '--dry-run', '--json'],
      envFor(sim, path.join(dir, 'data')),
    );
    assert.equal(result.status, 0, result.stderr);
    assert.equal(result.json!.status, 'dry-run');
    assert.deepEqual(result.json!.plan, {
      groups: 1,
      requests: 3,
      numbers: 450,
      estimatedSeconds: 1,
    });
    assert.equal(sim.records.length, 0);
    assert.equal(existsSync(path.join(dir, 'data', 'journal.sqlite')), false);
    // Whole requests per span of a message window: 299/1h holds one request of 150 (its mean
    // size), so three requests take two more hours; the numbers alone (450 / 299) would say one.
    const limited = await runCli(
      ['--message-window', '299/1h', 'send', file, '--dry-run', '--json'],
      envFor(sim, path.join(dir, 'data'), { SMSDROP_MAX_PER_REQUEST: '150' }),
    );
    assert.equal(limited.status, 0, limited.stderr);
    assert.equal((limited.json!.plan as { estimatedSeconds: number }).estimatedSeconds, 7200);
    const text = await runCli(
      ['--message-window', '299/1h', '--messages-per-second', '5', 'send', file, '--dry-run'],
      envFor(sim, path.join(dir, 'data'), { SMSDROP_MAX_PER_REQUEST: '150' }),
    );
    assert.match(
      text.stdout,
      /plan: 1 groups, 3 requests, 450 numbers; about 2 h 0 min at concurrency 8, 5 numbers\/s, message window 299\/1h\. Nothing was sent\./,
    );
  });

  it('--dry-run lists the first invalid rows with their lines and reasons, before anything is sent', async () => {
    const dir = tempDir();
    const bad = Array.from({ length: 12 }, (_, i) => `12-34x${i},1,a,b`);
    const file = writeCsv(
      dir,
      'check.csv',
      `phone,template,data1,data2\n13800000001,1,a,b\n${bad.join('\n')}\n1.38E+10,1,a,b\n`,
    );
    const json = await runCli(
      ['send', file, '--dry-run', '--json'],
      envFor(sim, path.join(dir, 'data')),
    );
    assert.equal(json.status, 0, json.stderr);
    const rows = json.json!.invalidRows as { line: number; reason: string }[];
    assert.deepEqual(
      rows.map((r) => r.line),
      [3, 4, 5, 6, 7, 8, 9, 10, 11, 12],
      'the first ten, by line',
    );
    assert.ok(rows.every((r) => r.reason.length > 0));
    const text = await runCli(['send', file, '--dry-run'], envFor(sim, path.join(dir, 'data')));
    assert.match(
      text.stdout,
      /invalid rows \(the first 10 of 13; a real run writes them all to NAME\.rejected\.csv\):\n {2}line 3: /,
    );
    assert.equal(sim.records.length, 0);
  });

  it('--dry-run names the sending window and whether it is open now', async () => {
    const dir = tempDir();
    const file = writeCsv(dir, 'night.csv', 'phone,template\n13800000001,1\n');
    // The hour is read once: should it turn during a run, every expected string still agrees.
    const now = new Date().getUTCHours();
    const hour = (offset: number) => `${String((now + offset + 24) % 24).padStart(2, '0')}:00`;
    const run = (window: string, json: boolean) =>
      runCli(
        ['send', file, '--dry-run', ...(json ? ['--json'] : [])],
        envFor(sim, path.join(dir, 'data'), {
          SMSDROP_SEND_WINDOW: window,
          SMSDROP_SEND_WINDOW_ZONE: 'UTC',
        }),
      );
    // Opens in one to two hours, whatever the minute now (a little less should the hour turn
    // meanwhile).
    const closed = await run(`${hour(2)}-${hour(3)}`, true);
    assert.equal(closed.status, 0, closed.stderr);
    const plan = closed.json!.plan as { sendWindow: { window: string; opensInSeconds: number } };
    assert.equal(plan.sendWindow.window, `${hour(2)}-${hour(3)} UTC`);
    assert.ok(
      plan.sendWindow.opensInSeconds > 3000 && plan.sendWindow.opensInSeconds <= 7200,
      String(plan.sendWindow.opensInSeconds),
    );
    const closedText = await run(`${hour(2)}-${hour(3)}`, false);
    assert.match(
      closedText.stdout,
      /sending window \d\d:00-\d\d:00 UTC: closed now, opens in (?:[12] h \d+ min|\d+ min \d+ s)\./,
    );
    const open = await run(`${hour(-1)}-${hour(2)}`, false);
    assert.match(open.stdout, /sending window \d\d:00-\d\d:00 UTC: open now\./);
    assert.equal(sim.records.length, 0);
  });

  it('exits 2 naming the problem for a file with no phone column, or no file', async () => {
    const dir = tempDir();
    const env = envFor(sim, path.join(dir, 'data'));
    const noPhone = await runCli(
      ['send', writeCsv(dir, 'nophone.csv', 'name,template\nbob,1\n'), '--json'],
      env,
    );
    assert.equal(noPhone.status, 2);
    assert.match(String(noPhone.json!.reason), /nophone\.csv.*phone column/i);
    const missing = await runCli(['send', path.join(dir, 'absent.csv')], env);
    assert.equal(missing.status, 2);
    assert.match(missing.stderr, /absent\.csv: no such file/);
  });

  it('a quote left open: refused at the line of that quote, nothing sent (csv-parse counted the lines ahead)', async () => {
    const dir = tempDir();
    const lines = ['手机号,模板ID,参数1,参数2'];
    for (let i = 1; i <= 30; i++) lines.push(`${13800138000 + i},1,abc${i},5`);
    lines.push('13900139000,1,"unclosed,5'); // line 32
    for (let i = 31; i <= 50; i++) lines.push(`${13800138000 + i},1,abc${i},5`);
    const file = writeCsv(dir, 'quote.csv', `${lines.join('\n')}\n`);
    const result = await runCli(['send', file, '--json'], envFor(sim, path.join(dir, 'data')));
    assert.equal(result.status, 2);
    assert.match(
      String(result.json!.reason),
      /quote\.csv, line 32: a double quote opened here is never closed/,
    );
    assert.equal(sim.records.length, 0);
  });

  it('exits 2 with the setting, value and expectation for a bad configuration value', async () => {
    const dir = tempDir();
    const result = await runCli(
      ['send', writeCsv(dir, 'x.csv', 'phone\n13800000001\n')],
      envFor(sim, path.join(dir, 'data'), { SMSDROP_MAX_PER_REQUEST: '500' }),
    );
    assert.equal(result.status, 2);
    assert.match(
      result.stderr,
      /maxPerRequest \(SMSDROP_MAX_PER_REQUEST\) = "500": expected a whole number from 1 to 200/,
    );
  });
});
