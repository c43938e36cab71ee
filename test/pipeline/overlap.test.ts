// Sending while the file is still being read (sendDuringIntake): when it happens, when it must
// not, and that a run cut short during reading, or a file refused after requests went out, still
// ends with every number delivered exactly once. Judged by the simulator's record.
import assert from 'node:assert/strict';
import { appendFileSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { after, before, describe, it } from 'node:test';
import { openReader } from '../../src/journals/index.js';
import { parseFaults, type RunningSimulator } from '../../src/simulator/index.js';
import { clearOfDayChange } from '../dayChange.js';
import {
  CREDS,
  deliveries,
  envFor,
  messageKey,
  runCli,
  startSend,
  startSim,
  tempDir,
  writeCsv,
} from './helpers.js';

const ROWS = 60_000;
const VALUES = [
  ['a', '1'],
  ['b', '2'],
  ['c', '3'],
];

/** ROWS rows over three groups; every 1000th row repeats a number from the file's first rows. */
function bigCsv(quoted = false): {
  text: string;
  expected: Map<string, number>;
  duplicates: number;
} {
  const expected = new Map<string, number>();
  const lines = ['phone,template,data1,data2'];
  let duplicates = 0;
  for (let i = 0; i < ROWS; i++) {
    const values = VALUES[i % 3]!;
    const repeat = i > 0 && i % 1000 === 0;
    const phone = `137${String(repeat ? i % 300 : i).padStart(8, '0')}`;
    if (repeat && (i % 300) % 3 === i % 3)
      duplicates++; // the same group: a duplicate row
    else expected.set(messageKey(CREDS.appId, '1', values, phone), 1);
    const data1 = quoted && i === ROWS - 1 ? '"a, quoted"' : values[0]!;
    lines.push(`${phone},1,${data1},${values[1]}`);
  }
  if (quoted)
    expected.delete(
      messageKey(
        CREDS.appId,
        '1',
        VALUES[(ROWS - 1) % 3]!,
        `137${String(ROWS - 1).padStart(8, '0')}`,
      ),
    );
  if (quoted)
    expected.set(
      messageKey(
        CREDS.appId,
        '1',
        ['a, quoted', VALUES[(ROWS - 1) % 3]![1]!],
        `137${String(ROWS - 1).padStart(8, '0')}`,
      ),
      1,
    );
  return { text: `${lines.join('\n')}\n`, expected, duplicates };
}

/** The last file's status in the journal, read while the sender may still be running. */
async function fileStatus(dataDir: string): Promise<string | undefined> {
  const journal = await openReader({ dataDir });
  if (!journal) throw new Error(`no journal in ${dataDir}`);
  try {
    return (await journal.listFiles()).at(-1)?.status;
  } finally {
    journal.close();
  }
}

/**
 * Starts `send` on a fresh copy of bigCsv(), SIGKILLs it once the simulator took `requests`
 * requests, checks the kill came while the file was being read, and sends the file again.
 */
async function killWhileReadingThenResend(
  sim: RunningSimulator,
  name: string,
  requests: number,
  extraEnv: Record<string, string>,
) {
  await clearOfDayChange(30_000); // the killed run's doubts are retried only on their own day
  const dir = tempDir();
  const csv = bigCsv();
  const file = writeCsv(dir, name, csv.text);
  const dataDir = path.join(dir, 'data');
  const env = envFor(sim, dataDir, extraEnv);
  const run = startSend(file, env);
  while (sim.records.length < requests) await sleep(1);
  run.child.kill('SIGKILL');
  await run.exited;
  assert.equal(await fileStatus(dataDir), 'intake', 'the kill came while the file was being read');
  const final = await runCli(['send', file, '--json'], env);
  assert.equal(final.status, 0, final.stderr);
  return { dir, final, ...csv };
}

async function firstRequest(sim: RunningSimulator, exited: Promise<unknown>): Promise<void> {
  let done = false;
  void exited.then(() => (done = true));
  while (sim.records.length === 0) {
    if (done) throw new Error('the sender exited before any request');
    await sleep(1);
  }
}

describe('sending while reading', () => {
  let sim: RunningSimulator;
  before(async () => (sim = await startSim({ latencyMs: [10, 20] })));
  after(() => sim.close());
  const settings = { SMSDROP_CONCURRENCY: '4' };

  it(
    'starts on full batches before the last row of an unquoted file is read; off, or quoted, waits for it',
    // no timeout of its own: scripts/run-tests.mjs bounds the file
    async () => {
      const cases: {
        name: string;
        quoted: boolean;
        env: Record<string, string>;
        statusAtFirstRequest: string;
      }[] = [
        { name: 'plain.csv', quoted: false, env: {}, statusAtFirstRequest: 'intake' },
        {
          name: 'off.csv',
          quoted: false,
          env: { SMSDROP_SEND_DURING_INTAKE: 'off' },
          statusAtFirstRequest: 'sending',
        },
        { name: 'quoted.csv', quoted: true, env: {}, statusAtFirstRequest: 'sending' },
      ];
      for (const c of cases) {
        sim.records.length = 0;
        const dir = tempDir();
        const { text, expected } = bigCsv(c.quoted);
        const file = writeCsv(dir, c.name, text);
        const dataDir = path.join(dir, 'data');
        const run = startSend(file, envFor(sim, dataDir, { ...settings, ...c.env }));
        await firstRequest(sim, run.exited);
        assert.equal(await fileStatus(dataDir), c.statusAtFirstRequest, c.name);
        assert.equal(await run.exited, 0, c.name);
        assert.deepEqual(deliveries(sim), expected, c.name);
      }
    },
  );

  it(
    'SIGKILL while reading, then send again: the rows already sent are kept and skipped, every number once',
    // no timeout of its own: scripts/run-tests.mjs bounds the file
    async () => {
      sim.records.length = 0;
      const { dir, final, expected, duplicates } = await killWhileReadingThenResend(
        sim,
        'killed.csv',
        5,
        settings,
      );
      assert.deepEqual(deliveries(sim), expected);
      assert.equal(final.json!.rows, ROWS);
      assert.equal(final.json!.duplicates, duplicates);
      assert.equal(final.json!.accepted, ROWS - duplicates);
      // The rows kept from the killed run were moved to their place: the result file is in line
      // order.
      const lines = readFileSync(path.join(dir, 'killed.result.csv'), 'utf8')
        .trim()
        .split('\r\n')
        .slice(1)
        .map((l) => Number(l.split(',')[0]));
      assert.equal(lines.length, ROWS);
      assert.ok(
        lines.every((line, i) => i === 0 || line > lines[i - 1]!),
        'result lines ascending',
      );
    },
  );

  it(
    'a run killed while reading after rate-limited answers (attempts given back) resumes all the same',
    // no timeout of its own: scripts/run-tests.mjs bounds the file
    async () => {
      const limited = await startSim({
        latencyMs: [10, 20],
        faults: parseFaults('status=160038@/4'),
      });
      try {
        const env = {
          ...settings,
          SMSDROP_RATE_LIMIT_DELAY_MS: '5',
          SMSDROP_RATE_LIMIT_MAX_DEFERRALS: '100',
        };
        const { expected } = await killWhileReadingThenResend(limited, 'limited.csv', 6, env);
        assert.deepEqual(deliveries(limited), expected);
      } finally {
        await limited.close();
      }
    },
  );

  it(
    'a file that grows after requests went out is refused, keeping them; given again once complete, it sends only the rest',
    // no timeout of its own: scripts/run-tests.mjs bounds the file
    async () => {
      sim.records.length = 0;
      const dir = tempDir();
      const { text, expected } = bigCsv();
      const file = writeCsv(dir, 'grown.csv', text);
      const dataDir = path.join(dir, 'data');
      const env = envFor(sim, dataDir, settings);
      const run = startSend(file, env);
      await firstRequest(sim, run.exited);
      // The rest of the file arrives while it is read (a copy that paused): refused as it
      // changed.
      const added = Array.from({ length: 500 }, (_, i) => `139${String(i).padStart(8, '0')}`);
      appendFileSync(file, added.map((p) => `${p},1,late,9\n`).join(''));
      for (const p of added) expected.set(messageKey(CREDS.appId, '1', ['late', '9'], p), 1);
      assert.equal(await run.exited, 2);
      assert.equal(await fileStatus(dataDir), 'refused');
      const sentBefore = sim.records.length;
      assert.ok(sentBefore > 0);
      const refused = await runCli(['report', 'grown.csv', '--format', 'json'], env);
      const counts = JSON.parse(refused.stdout) as Record<string, number>;
      assert.ok(counts.rows! > 0 && counts.accepted! >= sentBefore * 200, refused.stdout);
      assert.equal(
        counts.invalid! +
          counts.duplicates! +
          counts.accepted! +
          counts.failed! +
          counts.unknown! +
          counts.pending!,
        counts.rows,
        'the counts add up',
      );
      const result = readFileSync(path.join(dir, 'grown.result.csv'), 'utf8');
      assert.ok(
        (result.match(/,accepted,/g) ?? []).length >= sentBefore,
        'the result file names who got it',
      );

      const retry = await runCli(['retry', 'grown.csv', '--failed'], env);
      assert.equal(retry.status, 2);
      assert.match(retry.stderr, /went out while it was read: give the same file again/);

      // The complete file: it begins with the bytes first read, so it continues that run.
      const final = await runCli(['send', file, '--json'], env);
      assert.equal(final.status, 0, final.stderr);
      assert.deepEqual(deliveries(sim), expected);
      assert.equal(final.json!.rows, ROWS + added.length);
    },
  );
});

/** `count` rows of one message, each number its own: full batches of 200 that go while reading. */
function oneMessageRows(count: number): string[] {
  return Array.from({ length: count }, (_, i) => `137${String(i).padStart(8, '0')},1,a,1`);
}

/**
 * `smsdrop send` of a file of `rows` (under a header) to a simulator of its own answering after
 * `latencyMs`, `concurrency` requests at once: the simulator, closed, with what it saw.
 */
async function sendToSlowSimulator(
  rows: string[],
  latencyMs: number,
  concurrency: number,
): Promise<RunningSimulator> {
  const slow = await startSim({ latencyMs: [latencyMs, latencyMs] });
  try {
    const dir = tempDir();
    const file = writeCsv(
      dir,
      'end.csv',
      `${['phone,template,data1,data2', ...rows].join('\n')}\n`,
    );
    const env = envFor(slow, path.join(dir, 'data'), { SMSDROP_CONCURRENCY: String(concurrency) });
    const sent = await runCli(['send', file, '--json'], env);
    assert.equal(sent.status, 0, sent.stderr);
    return slow;
  } finally {
    await slow.close();
  }
}

describe('the end of reading', () => {
  it(
    'the batches released when the last row is read leave beside the requests still in flight, not after them',
    // no timeout of its own: scripts/run-tests.mjs bounds the file
    async () => {
      // Four full batches of one message, sent while reading; then a message whose rows are the
      // first and the last of the file: its batch can only go once the last row is read. Answers
      // slow enough that the requests sent while reading are all still in flight then (the
      // reading takes milliseconds).
      const rows = ['13900000000,1,last,1', ...oneMessageRows(800), '13900000001,1,last,1'];
      const slow = await sendToSlowSimulator(rows, 2500, 8);
      assert.equal(slow.acceptedCount, 5);
      // Had the requests in flight been let finish before the last batch went (a drain between
      // reading and sending), at most four would have been in flight at once.
      assert.equal(slow.peakInFlight, 5, 'the last batch left while the other four were out');
    },
  );

  it(
    'the batches released at the end go in the order they were opened, as the result file is written ahead',
    // no timeout of its own: scripts/run-tests.mjs bounds the file
    async () => {
      // `first` opens the file's first batch and ends on its last line; `late` is one row just
      // before it, in the file's last batch. Both can only go once the last row is read, while
      // the 30 full batches (one request at a time) are still being sent. The result file is
      // written in line order as pages become final: `first` holds its first page back, so it
      // goes before `late`, and before the full batches not claimed by then.
      const rows = [
        '13900000000,1,first,1',
        ...oneMessageRows(6000),
        '13900000002,1,late,1',
        '13900000001,1,first,1',
      ];
      const slow = await sendToSlowSimulator(rows, 100, 1);
      const order = slow.records.map((r) => r.datas[0]);
      assert.equal(order.length, 32);
      assert.ok(order.indexOf('first') < order.indexOf('late'), order.join(' '));
    },
  );
});
