// A list sent once, then given again as other bytes (what Excel writes when it saves it again,
// with rows added): the real CLI against the simulator. Only the new rows go; --resend and
// SMSDROP_REPEAT_WINDOW=off send every row again on purpose.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import iconv from 'iconv-lite';
import pLimit from 'p-limit';
import { processFile } from '../../src/pipeline/index.js';
import type { RunningSimulator } from '../../src/simulator/index.js';
import { cleanUp, sender, simulator } from '../report/helpers.js';
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

const SENT = [
  ['13800000001', '张三', '10:00'],
  ['13800000002', '李四', '10:00'],
  ['13800000003', '王五', '11:00'],
];
const ADDED = [
  ['13800000004', '赵六', '11:00'],
  ['13800000001', '张三', '12:00'], // a number already sent, with another message: sent
];

/** What a UTF-8 export from a script looks like. */
const utf8Lf = (rows: string[][]) =>
  `phone,templateId,参数1,参数2\n${rows.map((r) => [r[0], '1', r[1], r[2]].join(',')).join('\n')}\n`;
/**
 * The same rows as Chinese Excel saves them: GB18030, CRLF, a number written with a space and +86.
 */
const excelGb = (rows: string[][]) =>
  iconv.encode(
    `phone,templateId,参数1,参数2\r\n${rows.map((r) => [`+86 ${r[0]}`, '1', `"${r[1]}"`, r[2]].join(',')).join('\r\n')}\r\n`,
    'gb18030',
  );

describe('a list given again as other bytes', () => {
  let sim: RunningSimulator;
  before(async () => (sim = await startSim()));
  after(async () => {
    await sim.close();
    await cleanUp(); // what the in-process sender opened
  });

  const timesSent = (r: string[]) =>
    deliveries(sim).get(messageKey(CREDS.appId, '1', [r[1]!, r[2]!], r[0]!)) ?? 0;

  it('sends only the rows no other file sent; says which file and line sent the others; --resend and off send them again', async () => {
    const dir = tempDir();
    const env = envFor(sim, path.join(dir, 'data'));
    const first = await runCli(['send', writeCsv(dir, 'list.csv', utf8Lf(SENT)), '--json'], env);
    assert.equal(first.status, 0, first.stderr);

    const resaved = writeCsv(dir, 'list (Excel).csv', excelGb([...SENT, ...ADDED]));
    const planned = await runCli(['send', resaved, '--dry-run', '--json'], env);
    assert.deepEqual(
      [
        planned.json!.duplicates,
        planned.json!.repeats,
        (planned.json!.plan as { numbers: number }).numbers,
      ],
      [3, 3, 2],
      'the dry run leaves them out too',
    );

    const second = await runCli(['send', resaved], env);
    assert.equal(
      second.status,
      0,
      `every row accepted or a duplicate of an accepted row\n${second.stdout}${second.stderr}`,
    );
    assert.match(second.stdout, /rows 5 {2}invalid 0 {2}duplicates 3 {2}accepted 2 /);
    assert.match(
      second.stdout,
      /^repeats {4}3 row\(s\) not sent: another file sent the same message to their number within the repeat window \(24h\)/m,
    );
    for (const r of [...SENT, ...ADDED]) assert.equal(timesSent(r), 1, `${r.join(' ')} once`);
    const result = readFileSync(path.join(dir, 'list (Excel).result.csv'), 'utf8');
    assert.match(
      result,
      /^3,'\+86 13800000002,13800000002,duplicate,,the same message to this number goes with another file \(its report has the outcome\): line 3 of list\.csv \(file 1\),,/m,
    );
    assert.match(result, /^5,'\+86 13800000004,13800000004,accepted,"=""000000""",/m);
    const report = await runCli(['report', 'list (Excel).csv'], env);
    assert.match(
      report.stdout,
      /^of the duplicates, 3 go with other files that sent their number the same message\s+\(smsdrop export 2 --status duplicate/m,
      report.stderr,
    );

    const again = await runCli(['send', resaved, '--resend', '--json'], env);
    assert.deepEqual(
      [again.json!.status, again.json!.accepted, again.json!.repeats],
      ['done', 5, 0],
      again.stderr,
    );
    for (const r of SENT) assert.equal(timesSent(r), 2, `${r.join(' ')} sent again on purpose`);

    const off = await runCli(
      ['send', writeCsv(dir, 'copy.csv', utf8Lf(SENT).replace(/\n/g, '\r\n')), '--json'],
      { ...env, SMSDROP_REPEAT_WINDOW: 'off' },
    );
    assert.deepEqual([off.json!.accepted, off.json!.repeats], [3, 0], off.stderr);
    for (const r of SENT) assert.equal(timesSent(r), 3);
  });

  it('a list paused part-way, then edited in place and sent as a new file: the rows left to the first are named, exit 3; resume sends them without the old bytes', async () => {
    const dir = tempDir();
    const data = path.join(dir, 'data');
    const rows = Array.from({ length: 30 }, (_, i) => [
      `138000001${String(i).padStart(2, '0')}`,
      '客户',
      '10:00',
    ]);
    const file = writeCsv(dir, 'paused.csv', utf8Lf(rows));
    // A wrong token pauses sending at once: every row stays planned (as a stop part-way leaves
    // them).
    const first = await runCli(
      ['send', file, '--json'],
      envFor(sim, data, {
        SMSDROP_AUTH_TOKEN: 'wrongtoken000000000000000000000',
        SMSDROP_MAX_PER_REQUEST: '10',
      }),
    );
    assert.deepEqual(
      [first.status, first.json!.status, first.json!.code, first.json!.pending],
      [2, 'paused', 'E_PROVIDER_AUTH', 30],
    );
    const edited = rows.map((r, i) => (i === 4 ? [r[0]!, '客户', '11:00'] : r));
    writeCsv(dir, 'paused.csv', utf8Lf(edited)); // the same name, other bytes: a new file
    const second = await runCli(
      ['send', file, '--json'],
      envFor(sim, data, { SMSDROP_MAX_PER_REQUEST: '10' }),
    );
    assert.equal(second.status, 3, 'not "every row accepted": 29 of them wait in the paused file');
    assert.deepEqual(
      [second.json!.accepted, second.json!.repeats, second.json!.waitingIn],
      [1, 29, [{ id: 1, name: 'paused.csv', status: 'sending', rows: 29, inProgress: false }]],
    );
    const text = await runCli(['send', file], envFor(sim, data, { SMSDROP_MAX_PER_REQUEST: '10' }));
    assert.match(
      text.stdout,
      /Not sent yet, waiting in paused\.csv \(id 1\): 29: they go when that file goes on \(give it again, or, its bytes gone or changed, smsdrop resume ID\)/,
    );
    // The first file's bytes are gone: resume sends its rows from the journal.
    const resumed = await runCli(
      ['resume', '1', '--json'],
      envFor(sim, data, { SMSDROP_MAX_PER_REQUEST: '10' }),
    );
    assert.equal(resumed.status, 0, resumed.stderr);
    assert.deepEqual(
      [resumed.json!.status, resumed.json!.accepted, resumed.json!.pending],
      ['done', 30, 0],
    );
    for (const r of rows) assert.equal(timesSent(r), 1, `${r.join(' ')} once`);
    assert.equal(
      timesSent(edited[4]!),
      1,
      'the edited row went with the new file; its old text went with the first (resume sends that file as it was)',
    );
    const again = await runCli(['resume', '1'], envFor(sim, data));
    assert.equal(again.status, 2);
    assert.match(again.stderr, /is done: nothing is pending/);
  });

  it('resume exits 3 when the file it finishes has invalid rows: not every row was accepted', async () => {
    const dir = tempDir();
    const data = path.join(dir, 'data');
    const rows = [
      ['13800000301', '客户', '10:00'],
      ['12345', '客户', '10:00'],
      ['13800000302', '客户', '10:00'],
    ];
    const file = writeCsv(dir, 'with-invalid.csv', utf8Lf(rows));
    const first = await runCli(
      ['send', file, '--json'],
      envFor(sim, data, { SMSDROP_AUTH_TOKEN: 'wrongtoken000000000000000000000' }),
    );
    assert.deepEqual(
      [first.status, first.json!.status, first.json!.pending, first.json!.invalid],
      [2, 'paused', 2, 1],
    );
    const resumed = await runCli(['resume', '1', '--json'], envFor(sim, data));
    assert.equal(resumed.status, 3, 'one row was invalid');
    assert.deepEqual(
      [resumed.json!.status, resumed.json!.accepted, resumed.json!.invalid],
      ['done', 2, 1],
    );
  });

  it('reads the next file while the requests of the one before wait for a slot (intakes take turns, sending does not)', async () => {
    const dir = tempDir();
    const s = await sender(path.join(dir, 'data'), await simulator(), { maxPerRequest: 2 });
    // The only slot, held as another file's request holds it through a closed sending window.
    const limit = pLimit(1);
    let freeSlot!: () => void;
    void limit(() => new Promise<void>((resolve) => (freeSlot = resolve)));
    const ctx = { ...s.ctx, limit };
    const csv = (from: number, rows: number) =>
      `phone,templateId,data1,data2\n${Array.from({ length: rows }, (_, i) => `${13_800_000_000 + from + i},1,a,b`).join('\n')}\n`;
    // Large enough to be read in several chunks: its full batches are released, and wait for the
    // slot, while it is read.
    const first = processFile(ctx, writeCsv(dir, 'first.csv', csv(10_000, 6_000)));
    const second = processFile(ctx, writeCsv(dir, 'second.csv', csv(20_000, 6)));
    const statusOf = async (name: string) =>
      (await s.stores.reads.filesNamed(name)).map((f) => f.status).join();
    const bothSending = async () =>
      (await statusOf('first.csv')) === 'sending' && (await statusOf('second.csv')) === 'sending';
    try {
      // Either may be read first: the small file is inspected sooner and can take the first turn.
      for (let waited = 0; !(await bothSending()) && waited < 10_000; waited += 20) await sleep(20);
      assert.deepEqual(
        [await statusOf('first.csv'), await statusOf('second.csv')],
        ['sending', 'sending'],
        'both read while no request could start',
      );
    } finally {
      freeSlot();
    }
    const results = await Promise.all([first, second]);
    assert.deepEqual(
      results.map((r) => [r.outcome, r.counts.accepted]),
      [
        ['finished', 6_000],
        ['finished', 6],
      ],
    );
  });
});
