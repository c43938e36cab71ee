// Exactly once under faults, crashes and account problems, judged by the simulator's record.
import assert from 'node:assert/strict';
import { appendFileSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, it } from 'node:test';
import { clearOfDayChange } from '../dayChange.js';
import { openReader } from '../../src/journals/index.js';
import { parseFaults } from '../../src/simulator/index.js';
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
import { makeJournal, withSqliteFile } from '../sqliteFile.js';

const ALL_FAULTS = 'http500@/7,status=160000@/5,cut-before@/11,cut-after@/6,stall@/13';

/** n distinct numbers of one group, so a phone names its message. */
function numbers(n: number, prefix = '137'): string[] {
  return Array.from({ length: n }, (_, i) => `${prefix}${String(i).padStart(8, '0')}`);
}
function csvOf(phones: string[]): string {
  return `phone,template,data1,data2\n${phones.map((p) => `${p},1,code,42`).join('\n')}\n`;
}
const keyOf = (phone: string) => messageKey(CREDS.appId, '1', ['code', '42'], phone);

/** status by normalised phone, from NAME.result.csv */
function resultStatuses(file: string): Map<string, string> {
  const lines = readFileSync(file, 'utf8')
    .replace(/^\uFEFF/, '')
    .trim()
    .split('\r\n')
    .slice(1);
  return new Map(lines.map((l) => l.split(',')).map((cells) => [cells[2]!, cells[3]!]));
}

// The simulator runs in this test process: should the process stall, ordinary answers pass the
// short timeout, and 20 in a row would pause the run as for an outage (tested on its own below).
const FAST = {
  SMSDROP_MAX_PER_REQUEST: '10',
  SMSDROP_CONCURRENCY: '4',
  SMSDROP_RESPONSE_TIMEOUT_MS: '300',
  SMSDROP_MAX_ATTEMPTS: '30',
  SMSDROP_PAUSE_AFTER_FAILURES: '0',
};

describe('faults on the wire', () => {
  for (const format of ['json', 'xml']) {
    it(`reqId on (${format}): every row ends accepted, each message delivered exactly once`, async () => {
      await clearOfDayChange(60_000); // doubts become unknown at a day change
      const sim = await startSim({ faults: parseFaults(ALL_FAULTS) });
      try {
        const dir = tempDir();
        const phones = numbers(300);
        const result = await runCli(
          ['send', writeCsv(dir, 'f.csv', csvOf(phones)), '--json'],
          envFor(sim, path.join(dir, 'data'), { ...FAST, SMSDROP_FORMAT: format }),
        );
        assert.equal(result.status, 0, result.stderr);
        assert.equal(result.json!.accepted, 300);
        assert.deepEqual(deliveries(sim), new Map(phones.map((p) => [keyOf(p), 1])));
        assert.ok(Number(result.json!.requests) > 30, 'the faults made it retry');
      } finally {
        await sim.close();
      }
    });
  }

  it('reqId off: rows in doubt become unknown and are never resent; accepted rows were delivered once', async () => {
    const sim = await startSim({ faults: parseFaults(ALL_FAULTS) });
    try {
      const dir = tempDir();
      const phones = numbers(300);
      const file = writeCsv(dir, 'g.csv', csvOf(phones));
      const result = await runCli(
        ['send', file, '--json'],
        envFor(sim, path.join(dir, 'data'), { ...FAST, SMSDROP_REQ_ID: 'off' }),
      );
      assert.equal(result.status, 3, 'unknown rows make the run incomplete');
      assert.ok(Number(result.json!.unknown) > 0);
      const delivered = deliveries(sim);
      for (const count of delivered.values()) assert.equal(count, 1, 'nothing delivered twice');
      const statuses = resultStatuses(path.join(dir, 'g.result.csv'));
      for (const phone of phones) {
        const status = statuses.get(phone);
        const times = delivered.get(keyOf(phone)) ?? 0;
        if (status === 'accepted') assert.equal(times, 1, `${phone} accepted`);
        else if (status === 'failed') assert.equal(times, 0, `${phone} failed means not sent`);
        else assert.equal(status, 'unknown', `${phone}: ${status}`);
      }
      // A second run does not resend unknown rows.
      const before = sim.records.length;
      const again = await runCli(
        ['send', file, '--json'],
        envFor(sim, path.join(dir, 'data'), { ...FAST, SMSDROP_REQ_ID: 'off' }),
      );
      assert.equal(again.json!.status, 'already-sent');
      assert.equal(sim.records.length, before);
    } finally {
      await sim.close();
    }
  });

  it('number-rejected: the batch is halved until the blocked numbers are isolated; the others get their message', async () => {
    const phones = numbers(40);
    const blocked = [phones[3]!, phones[17]!, phones[18]!];
    const sim = await startSim({ blocked });
    try {
      const dir = tempDir();
      const file = writeCsv(dir, 'b.csv', csvOf(phones));
      const result = await runCli(
        ['send', file, '--json'],
        envFor(sim, path.join(dir, 'data'), { SMSDROP_MAX_PER_REQUEST: '20' }),
      );
      assert.equal(result.status, 3);
      assert.deepEqual([result.json!.accepted, result.json!.failed], [37, 3]);
      assert.deepEqual(
        deliveries(sim),
        new Map(phones.filter((p) => !blocked.includes(p)).map((p) => [keyOf(p), 1])),
      );
      const resultCsv = readFileSync(path.join(dir, 'b.result.csv'), 'utf8');
      for (const p of blocked) assert.match(resultCsv, new RegExp(`,${p},failed,160034,`));
    } finally {
      await sim.close();
    }
  });

  it('a provider whose limit is 100 numbers (older docs): requests of 200 are refused with 160048 and halved; each number goes once', async () => {
    const phones = numbers(450);
    const sim = await startSim({ maxNumbers: 100 });
    try {
      const dir = tempDir();
      const result = await runCli(
        ['send', writeCsv(dir, 'big.csv', csvOf(phones)), '--json'],
        envFor(sim, path.join(dir, 'data'), { SMSDROP_MAX_PER_REQUEST: '200' }),
      );
      assert.equal(result.status, 0, result.stderr);
      assert.equal(result.json!.accepted, 450);
      assert.deepEqual(deliveries(sim), new Map(phones.map((p) => [keyOf(p), 1])));
      assert.ok(sim.records.every((r) => r.to.length <= 100));
    } finally {
      await sim.close();
    }
  });

  it('rate-limited (a number over its daily cap): the batch is halved until the capped number is isolated; the others go now, it is deferred, then failed', async () => {
    const phones = numbers(40);
    const capped = phones[25]!;
    const sim = await startSim({ capped: [capped] });
    try {
      const dir = tempDir();
      const file = writeCsv(dir, 'c.csv', csvOf(phones));
      const env = envFor(sim, path.join(dir, 'data'), {
        SMSDROP_MAX_PER_REQUEST: '20',
        SMSDROP_RATE_LIMIT_DELAY_MS: '50',
        SMSDROP_RATE_LIMIT_MAX_DEFERRALS: '1',
      });
      const result = await runCli(['send', file, '--json'], env);
      assert.equal(result.status, 3);
      assert.deepEqual([result.json!.accepted, result.json!.failed], [39, 1]);
      assert.deepEqual(
        deliveries(sim),
        new Map(phones.filter((p) => p !== capped).map((p) => [keyOf(p), 1])),
      );
      assert.match(
        readFileSync(path.join(dir, 'c.result.csv'), 'utf8'),
        new RegExp(`,${capped},failed,160040,`),
      );
    } finally {
      await sim.close();
    }
  });
});

describe('account-fatal answers', () => {
  it('a wrong token stops the run with pending batches, E_PROVIDER_AUTH and exit 2; the right token then finishes it', async () => {
    const sim = await startSim();
    try {
      const dir = tempDir();
      const phones = numbers(50);
      const file = writeCsv(dir, 'a.csv', csvOf(phones));
      const data = path.join(dir, 'data');
      const wrong = await runCli(
        ['send', file, '--json'],
        envFor(sim, data, {
          SMSDROP_AUTH_TOKEN: 'wrongtoken000000000000000000000',
          SMSDROP_MAX_PER_REQUEST: '10',
        }),
      );
      assert.equal(wrong.status, 2);
      assert.equal(wrong.json!.status, 'paused');
      assert.equal(wrong.json!.code, 'E_PROVIDER_AUTH');
      assert.equal(wrong.json!.pending, 50);
      assert.match(String(wrong.json!.reason), /111109/);
      assert.ok(
        Number(wrong.json!.requests) <= 8,
        'it stopped at once rather than burning through the file',
      );
      assert.equal(sim.records.length, 0);
      assert.doesNotMatch(wrong.stdout + wrong.stderr, /wrongtoken/);
      const right = await runCli(
        ['send', file, '--json'],
        envFor(sim, data, { SMSDROP_MAX_PER_REQUEST: '10' }),
      );
      assert.equal(right.status, 0, right.stderr);
      assert.equal(right.json!.accepted, 50);
      assert.deepEqual(deliveries(sim), new Map(phones.map((p) => [keyOf(p), 1])));
    } finally {
      await sim.close();
    }
  });
});

describe('an outage', () => {
  it('pauses the run after 20 requests in a row with no answer, keeping every row pending; the next run finishes', async () => {
    const down = await startSim({ faults: parseFaults('http500@/1') });
    const phones = numbers(100);
    const dir = tempDir();
    const file = writeCsv(dir, 'o.csv', csvOf(phones));
    const data = path.join(dir, 'data');
    try {
      const first = await runCli(
        ['send', file, '--json'],
        envFor(down, data, { SMSDROP_MAX_PER_REQUEST: '10', SMSDROP_CONCURRENCY: '4' }),
      );
      assert.equal(first.status, 3, 'an outage: exit 3, not a set-up mistake');
      assert.equal(first.json!.status, 'paused');
      assert.equal(first.json!.code, 'E_PROVIDER_FAILING');
      assert.match(String(first.json!.reason), /failed 2\d requests in a row/);
      assert.deepEqual([first.json!.pending, first.json!.failed, first.json!.unknown], [100, 0, 0]);
    } finally {
      await down.close();
    }
    const up = await startSim();
    try {
      const second = await runCli(
        ['send', file, '--json'],
        envFor(up, data, { SMSDROP_MAX_PER_REQUEST: '10' }),
      );
      assert.equal(second.status, 0, second.stderr);
      assert.deepEqual(deliveries(up), new Map(phones.map((p) => [keyOf(p), 1])));
    } finally {
      await up.close();
    }
  });
});

describe('an outage shorter than the pause threshold', () => {
  it('a batch that runs out of attempts while the provider answers nothing pauses the run instead of ending failed or unknown', async () => {
    const down = await startSim({ faults: parseFaults('http500@/1') });
    const phones = numbers(30);
    const dir = tempDir();
    const file = writeCsv(dir, 'short.csv', csvOf(phones));
    const data = path.join(dir, 'data');
    try {
      // 3 batches of 2 attempts: 6 requests, far fewer than the 20 in a row that pause sending.
      const first = await runCli(
        ['send', file, '--json'],
        envFor(down, data, { SMSDROP_MAX_PER_REQUEST: '10', SMSDROP_MAX_ATTEMPTS: '2' }),
      );
      assert.equal(first.status, 3);
      assert.equal(first.json!.status, 'paused');
      assert.match(
        String(first.json!.reason),
        /the provider answered no request during this batch's last 2 attempts/,
      );
      assert.deepEqual([first.json!.pending, first.json!.failed, first.json!.unknown], [30, 0, 0]);
      // Run again, still down, with a pause threshold below the attempts: the silence is read from
      // the journal, so a restart or a pause in between does not end the batches unknown either.
      for (let run = 0; run < 2; run++) {
        const again = await runCli(
          ['send', file, '--json'],
          envFor(down, data, {
            SMSDROP_MAX_PER_REQUEST: '10',
            SMSDROP_MAX_ATTEMPTS: '3',
            SMSDROP_PAUSE_AFTER_FAILURES: '2',
          }),
        );
        assert.deepEqual(
          [again.json!.status, again.json!.pending, again.json!.unknown],
          ['paused', 30, 0],
        );
      }
    } finally {
      await down.close();
    }
    const up = await startSim();
    try {
      const second = await runCli(
        ['send', file, '--json'],
        envFor(up, data, { SMSDROP_MAX_PER_REQUEST: '10', SMSDROP_MAX_ATTEMPTS: '2' }),
      );
      assert.equal(second.status, 0, second.stderr);
      assert.deepEqual(deliveries(up), new Map(phones.map((p) => [keyOf(p), 1])));
    } finally {
      await up.close();
    }
  });
});

describe('crashes', () => {
  it(
    'SIGKILL at random moments, then send again: every number delivered exactly once',
    // no timeout of its own: scripts/run-tests.mjs bounds the file
    async () => {
      await clearOfDayChange(30_000); // a killed run's doubts are retried only on their own day
      const sim = await startSim({ latencyMs: [2, 15] });
      try {
        const dir = tempDir();
        const phones = numbers(2000);
        const file = writeCsv(dir, 'k.csv', csvOf(phones));
        const env = envFor(sim, path.join(dir, 'data'), {
          SMSDROP_MAX_PER_REQUEST: '5',
          SMSDROP_CONCURRENCY: '4',
        });
        // 400 requests in all. Each run is killed once the simulator has taken a random 1 to 60
        // more of them: in the middle of sending, however fast or slow this machine is today.
        let kills = 0;
        for (let round = 0; round < 5; round++) {
          const run = startSend(file, env);
          let exited = false;
          void run.exited.then(() => (exited = true));
          const target = sim.records.length + 1 + Math.floor(Math.random() * 60);
          while (!exited && sim.records.length < target) await sleep(2);
          if (exited) break;
          run.child.kill('SIGKILL');
          await run.exited;
          kills++;
        }
        const final = await runCli(['send', file, '--json'], env);
        assert.ok(final.status === 0, final.stderr);
        assert.ok(kills >= 1, 'the test killed at least one run');
        assert.deepEqual(deliveries(sim), new Map(phones.map((p) => [keyOf(p), 1])));
        assert.equal(Number(final.json!.accepted), 2000);
      } finally {
        await sim.close();
      }
    },
  );
});

describe('a file that grows after it was taken (a copy that paused)', () => {
  it(
    'interrupted mid-send, then grown: the next run continues it, sending only the rows it had not sent',
    // no timeout of its own: scripts/run-tests.mjs bounds the file
    async () => {
      await clearOfDayChange(30_000); // the killed run's doubts are retried only on their own day
      const sim = await startSim({ latencyMs: [2, 15] });
      try {
        const dir = tempDir();
        const first = numbers(1000);
        const file = writeCsv(dir, 'grows.csv', csvOf(first));
        const env = envFor(sim, path.join(dir, 'data'), {
          SMSDROP_MAX_PER_REQUEST: '5',
          SMSDROP_CONCURRENCY: '4',
        });
        const run = startSend(file, env);
        while (sim.records.length < 20) await sleep(2);
        run.child.kill('SIGKILL');
        await run.exited;
        assert.ok(sim.records.length < 200, 'killed before the end');
        const added = numbers(300, '136');
        appendFileSync(file, added.map((p) => `${p},1,code,42\n`).join(''));
        const final = await runCli(['send', file, '--json'], env);
        assert.equal(final.status, 0, final.stderr);
        assert.deepEqual(deliveries(sim), new Map([...first, ...added].map((p) => [keyOf(p), 1])));
        assert.equal(final.json!.rows, 1300);
        assert.equal(final.json!.accepted, 1300);
      } finally {
        await sim.close();
      }
    },
  );
  it(
    'grown after it was read, while its requests went out: refused, not done; the complete file then sends only the rest',
    // no timeout of its own: scripts/run-tests.mjs bounds the file
    async () => {
      const sim = await startSim({ latencyMs: [10, 20] });
      try {
        const dir = tempDir();
        const first = numbers(1000);
        const file = writeCsv(dir, 'late.csv', csvOf(first));
        // Read to the end before the first request, so the file grows only after it was read.
        const env = envFor(sim, path.join(dir, 'data'), {
          SMSDROP_MAX_PER_REQUEST: '5',
          SMSDROP_CONCURRENCY: '4',
          SMSDROP_SEND_DURING_INTAKE: 'off',
        });
        const running = runCli(['send', file, '--json'], env);
        while (sim.records.length < 10) await sleep(2);
        const added = numbers(300, '136');
        appendFileSync(file, added.map((p) => `${p},1,code,42\n`).join(''));
        const refused = await running;
        assert.equal(refused.status, 2, refused.stdout + refused.stderr);
        assert.match(
          refused.stdout + refused.stderr,
          /changed after it was read .*was it still being copied\?.*had already gone out before it changed/s,
        );
        assert.deepEqual(
          deliveries(sim),
          new Map(first.map((p) => [keyOf(p), 1])),
          'the rows read were all sent, once',
        );
        assert.equal(
          resultStatuses(path.join(dir, 'late.result.csv')).get(first[0]!),
          'accepted',
          'the result file says who got it',
        );

        const final = await runCli(['send', file, '--json'], env);
        assert.equal(final.status, 0, final.stderr);
        assert.deepEqual(deliveries(sim), new Map([...first, ...added].map((p) => [keyOf(p), 1])));
        assert.equal(final.json!.rows, 1300);
      } finally {
        await sim.close();
      }
    },
  );
  it('a longer copy under another name does not take over a paused file that is still there: that one resumes as itself', async () => {
    const sim = await startSim();
    try {
      const dir = tempDir();
      const data = path.join(dir, 'data');
      const first = numbers(30);
      const paused = writeCsv(dir, 'a.csv', csvOf(first));
      const wrong = await runCli(
        ['send', paused, '--json'],
        envFor(sim, data, {
          SMSDROP_AUTH_TOKEN: 'wrongtoken000000000000000000000',
          SMSDROP_MAX_PER_REQUEST: '10',
        }),
      );
      assert.equal(wrong.json!.status, 'paused', wrong.stderr);
      const longer = writeCsv(
        dir,
        'b.csv',
        `${csvOf(first)}${numbers(4, '136')
          .map((p) => `${p},1,code,42\n`)
          .join('')}`,
      );
      const b = await runCli(
        ['send', longer, '--json'],
        envFor(sim, data, { SMSDROP_MAX_PER_REQUEST: '10' }),
      );
      assert.equal(b.status, 3, 'its first 30 rows wait in the paused a.csv');
      assert.deepEqual(b.json!.waitingIn, [
        { id: 1, name: 'a.csv', status: 'sending', rows: 30, inProgress: false },
      ]);
      // a.csv's record is still a.csv's: run again, it resumes instead of being read as a new file.
      const journal = (await openReader({ dataDir: data }))!;
      try {
        const names = await journal.listFiles();
        assert.deepEqual(
          names.map((f) => f.name),
          ['a.csv', 'b.csv'],
        );
        assert.equal(names[0]!.sha256, wrong.json!.sha256);
      } finally {
        journal.close();
      }
    } finally {
      await sim.close();
    }
  });
});

describe('the journal fails under a run', () => {
  it('a row the journal cannot store refuses the file and says it was the journal; once it recovers, the same file finishes, each number delivered once', async () => {
    const sim = await startSim();
    try {
      const dir = tempDir();
      const phones = numbers(3000);
      const file = writeCsv(dir, 'j.csv', csvOf(phones));
      const data = path.join(dir, 'data');
      // The journal, made beforehand, fails to store line 2,500 as a full disk would fail a write:
      // two chunks of rows are in by then, and some of their batches may be sent already.
      await makeJournal(data);
      withSqliteFile(
        data,
        (db) =>
          db.exec(
            "CREATE TRIGGER fail_line BEFORE INSERT ON rows WHEN NEW.line = 2500 BEGIN SELECT RAISE(ABORT, 'database or disk is full (simulated)'); END",
          ),
        { write: true },
      );
      const env = envFor(sim, data, { SMSDROP_MAX_PER_REQUEST: '10' });
      const first = await runCli(['send', file, '--json'], env);
      assert.notEqual(first.status, 0);
      assert.equal(first.json!.status, 'refused', first.stdout);
      assert.match(
        String(first.json!.reason),
        /j\.csv: the journal could not record it: .*database or disk is full \(simulated\)/,
      );
      assert.equal(first.json!.code, 'E_JOURNAL_WRITE');
      assert.match(
        first.stderr,
        /^smsdrop: E_JOURNAL_WRITE: .*j\.csv: the journal could not record it/m,
      );
      // Requests of the first chunks usually went out before the failure (8 of them in one run);
      // the timing decides, so this test does not count on it.
      for (const count of deliveries(sim).values()) assert.equal(count, 1);

      withSqliteFile(data, (db) => db.exec('DROP TRIGGER fail_line'), { write: true });
      const second = await runCli(['send', file, '--json'], env);
      assert.equal(second.status, 0, second.stderr);
      assert.equal(second.json!.accepted, 3000);
      assert.deepEqual(deliveries(sim), new Map(phones.map((p) => [keyOf(p), 1])));
    } finally {
      await sim.close();
    }
  });
});
