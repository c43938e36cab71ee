// The codes of the public tables through the whole run: the real CLI against the simulator.
import assert from 'node:assert/strict';
import path from 'node:path';
import { describe, it } from 'node:test';
import { parseFaults } from '../../src/simulator/index.js';
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

function numbers(n: number, prefix = '137'): string[] {
  return Array.from({ length: n }, (_, i) => `${prefix}${String(i).padStart(8, '0')}`);
}
const csvOf = (phones: string[]) =>
  `phone,template,data1,data2\n${phones.map((p) => `${p},1,code,42`).join('\n')}\n`;
const keyOf = (phone: string) => messageKey(CREDS.appId, '1', ['code', '42'], phone);

describe('account codes of the public tables', () => {
  for (const [code, error] of [
    ['111115', 'E_PROVIDER_IP'],
    ['111212', 'E_PROVIDER_APP'],
    ['111226', 'E_PROVIDER_APP'],
  ] as const) {
    it(`${code} on every request: the run stops at once with every row pending`, async () => {
      const sim = await startSim({ faults: parseFaults(`status=${code}@/1`) });
      try {
        const dir = tempDir();
        const file = writeCsv(dir, 'a.csv', csvOf(numbers(200)));
        const result = await runCli(
          ['send', file, '--json'],
          envFor(sim, path.join(dir, 'data'), {
            SMSDROP_MAX_PER_REQUEST: '10',
            SMSDROP_CONCURRENCY: '2',
          }),
        );
        assert.equal(result.status, 2, result.stderr);
        assert.deepEqual(
          [result.json!.status, result.json!.code, result.json!.pending, result.json!.failed],
          ['paused', error, 200, 0],
        );
        assert.match(String(result.json!.reason), new RegExp(code));
        assert.ok(
          Number(result.json!.requests) <= 2,
          `stopped at once, not after ${String(result.json!.requests)} requests`,
        );
      } finally {
        await sim.close();
      }
    });
  }
});

describe('too many requests at once', () => {
  for (const code of ['111114', '111116', '111112']) {
    it(`${code} on every third request: every number is sent exactly once`, async () => {
      const sim = await startSim({ faults: parseFaults(`status=${code}@/3`) });
      try {
        const dir = tempDir();
        const phones = numbers(120);
        const env = envFor(sim, path.join(dir, 'data'), {
          SMSDROP_MAX_PER_REQUEST: '10',
          SMSDROP_CONCURRENCY: '4',
          SMSDROP_PAUSE_AFTER_FAILURES: '0',
        });
        const result = await runCli(['send', writeCsv(dir, 'b.csv', csvOf(phones)), '--json'], env);
        assert.equal(result.status, 0, result.stderr);
        assert.equal(result.json!.accepted, 120);
        assert.deepEqual(deliveries(sim), new Map(phones.map((p) => [keyOf(p), 1])));
        assert.match(
          result.stderr,
          new RegExp(
            `provider answered ${code} \\(too many requests at once\\): requests in flight lowered from 4 to 2`,
          ),
        );
        const status = await runCli(['status'], env);
        assert.match(
          status.stdout,
          new RegExp(
            `^lowered {4}the provider said too many requests at once \\(${code} ×\\d+ in the last minute\\)`,
            'm',
          ),
          status.stderr,
        );
      } finally {
        await sim.close();
      }
    });
  }
});

describe('a code the tables do not explain', () => {
  it('fails its batch without a retry, is logged once, and the report names it', async () => {
    const sim = await startSim({
      numberCodes: { '13700000003': '177777', '13700000005': '177777' },
    });
    try {
      const dir = tempDir();
      const data = path.join(dir, 'data');
      const env = envFor(sim, data, { SMSDROP_MAX_PER_REQUEST: '1', SMSDROP_CONCURRENCY: '1' });
      const result = await runCli(
        ['send', writeCsv(dir, 'c.csv', csvOf(numbers(8))), '--json'],
        env,
      );
      assert.deepEqual([result.json!.accepted, result.json!.failed], [6, 2], result.stderr);
      assert.equal(
        result.stderr.match(/unknown provider code "177777"/g)?.length,
        1,
        result.stderr,
      );
      const report = await runCli(['report', 'c.csv', '--format', 'json'], env);
      const failures = (
        JSON.parse(report.stdout) as {
          failures: Array<{ status_code: string; class: string; count: number }>;
        }
      ).failures;
      assert.deepEqual(
        failures.map((f) => [f.status_code, f.class, f.count]),
        [['177777', 'unknown provider code', 2]],
      );
    } finally {
      await sim.close();
    }
  });
});

describe('international numbers (SMSDROP_ALLOW_INTERNATIONAL on)', () => {
  it('go one per request, the others still in bulk; 160070 fails that number alone, with its code', async () => {
    const international = ['+44 20 7946 0001', '0085212345678', '+1 415 555 0123', '0044207946000'];
    const sim = await startSim({ numberCodes: { '0044207946000': '160070' } });
    try {
      const dir = tempDir();
      const mainland = numbers(6);
      const rows = [...mainland.slice(0, 3), ...international, ...mainland.slice(3)];
      const result = await runCli(
        ['send', writeCsv(dir, 'i.csv', csvOf(rows)), '--json'],
        envFor(sim, path.join(dir, 'data'), { SMSDROP_ALLOW_INTERNATIONAL: 'on' }),
      );
      assert.deepEqual([result.json!.accepted, result.json!.failed], [9, 1], result.stderr);
      const lists = sim.records.map((r) => r.to.join(',')).sort();
      assert.deepEqual(
        lists,
        ['0014155550123', '00442079460001', '0085212345678', mainland.join(',')].sort(),
        'each international number alone, the mainland ones in one request',
      );
      assert.equal(sim.requestCount, 5, 'one refused request for 160070, no 160059 and no halving');
      const report = JSON.parse(
        (await runCli(['report', 'i.csv', '--format', 'json'], envFor(sim, path.join(dir, 'data'))))
          .stdout,
      ) as { failures: Array<{ status_code: string; count: number }> };
      assert.deepEqual(
        report.failures.map((f) => [f.status_code, f.count]),
        [['160070', 1]],
      );
    } finally {
      await sim.close();
    }
  });
});
