// Issue 25, item 6: the templates file. With it, a row whose values do not fill its template is
// invalid at intake, and `send --dry-run` shows the messages as they will read, their SMS
// segments and the file's billable segments. A broken templates file stops the command (exit 2,
// one line). The real CLI in a child process, against the simulator.
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
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

const TEMPLATES = {
  '1': '【某某公司】您的验证码是{1}，{2}分钟内有效',
  '2': '【某某公司】{1}',
  '3': '【某某公司】欢迎',
};
const LONG = '长'.repeat(100); // with the signature 106 characters: 2 segments of 67
// With the signature 70 characters, but 121 UTF-16 units (an emoji is two), as carriers count:
// 2 segments.
const EMOJI = '长'.repeat(13) + '😀'.repeat(51);

const CSV = [
  'phone,templateId,data1,data2,data3',
  '13800000001,1,1234,5',
  '13800000002,1,1234,5',
  '13800000003,1,9999,5',
  '13800000004,1,1234', // one value short
  '13800000005,1,1234,5,x', // one too many
  `13800000006,2,${LONG}`,
  `13800000007,2,${EMOJI}`,
  `13800000008,2,${LONG}`,
  '',
].join('\n');

function templatesFile(dir: string, content: string | object): string {
  const file = path.join(dir, 'templates.json');
  writeFileSync(file, typeof content === 'string' ? content : JSON.stringify(content));
  return file;
}

describe('the templates file', () => {
  let sim: RunningSimulator;
  before(async () => (sim = await startSim()));
  after(() => sim.close());

  it('the dry run shows each message, its segments and the billable segments; rows short of values or with too many are invalid', async () => {
    const dir = tempDir();
    const env = envFor(sim, path.join(dir, 'data'), {
      SMSDROP_TEMPLATES_FILE: templatesFile(dir, TEMPLATES),
    });
    const file = writeCsv(dir, 'codes.csv', CSV);
    const json = await runCli(['send', file, '--dry-run', '--json'], env);
    assert.equal(json.status, 0, json.stderr);
    const summary = json.json!;
    assert.equal(summary.invalid, 2);
    const invalid = summary.invalidRows as Array<{ line: number; reason: string }>;
    assert.deepEqual(
      invalid.map((r) => r.line),
      [5, 6],
    );
    assert.match(
      invalid[0]!.reason,
      /^template 1 takes 2 value\(s\) \(\{1\}\.\.\{2\}\) but the row gives 1: "【某某公司】您的验证码是\{1\}，\{2\}分钟内有效" \(templates\.json\)$/,
    );
    assert.match(invalid[1]!.reason, /template 1 takes 2 value\(s\) .* but the row gives 3/);
    const messages = (summary.plan as { messages: Record<string, unknown> }).messages;
    assert.deepEqual(messages.sample, [
      {
        templateId: '1',
        message: '【某某公司】您的验证码是1234，5分钟内有效',
        segments: 1,
        numbers: 2,
      },
      {
        templateId: '1',
        message: '【某某公司】您的验证码是9999，5分钟内有效',
        segments: 1,
        numbers: 1,
      },
      { templateId: '2', message: `【某某公司】${LONG}`, segments: 2, numbers: 2 },
      { templateId: '2', message: `【某某公司】${EMOJI}`, segments: 2, numbers: 1 },
    ]);
    assert.deepEqual(
      [messages.groups, messages.numbers, messages.billableSegments],
      [4, 6, 2 + 1 + 2 * 2 + 2],
    );

    const text = await runCli(['send', file, '--dry-run'], env);
    assert.equal(text.status, 0);
    assert.match(
      text.stdout,
      /messages \(texts from .*templates\.json\), 4 message\(s\):\n {2}template 1, 2 number\(s\), 1 segment\(s\): 【某某公司】您的验证码是1234，5分钟内有效\n/,
    );
    assert.match(
      text.stdout,
      /billable segments: 9 \(segments × numbers over 4 message\(s\) to 6 number\(s\); 70 UTF-16 units make one segment, 67 each beyond, an emoji counting two\)/,
    );
    assert.match(text.stdout, /line 5: template 1 takes 2 value\(s\)/);
    assert.equal(sim.records.length, 0);
  });

  it('a real send leaves out the rows that do not fill their template', async () => {
    const dir = tempDir();
    const env = envFor(sim, path.join(dir, 'data'), {
      SMSDROP_TEMPLATES_FILE: templatesFile(dir, TEMPLATES),
    });
    const before = sim.records.length;
    const result = await runCli(['send', writeCsv(dir, 'codes.csv', CSV), '--json'], env);
    assert.equal(result.status, 3, result.stderr); // invalid rows: not every row accepted
    const sent = deliveries({ ...sim, records: sim.records.slice(before) });
    assert.equal(sent.size, 6);
    assert.equal(sent.has(messageKey(CREDS.appId, '1', ['1234'], '13800000004')), false);
    assert.equal(sent.has(messageKey(CREDS.appId, '1', ['1234', '5', 'x'], '13800000005')), false);
  });

  it('a row whose template the file does not know is invalid, naming the template', async () => {
    const dir = tempDir();
    const env = envFor(sim, path.join(dir, 'data'), {
      SMSDROP_TEMPLATES_FILE: templatesFile(dir, { '1': TEMPLATES['1'] }),
    });
    const result = await runCli(
      [
        'send',
        writeCsv(dir, 'other.csv', 'phone,templateId\n13800000001,3\n'),
        '--dry-run',
        '--json',
      ],
      env,
    );
    assert.equal(result.status, 0);
    assert.match(
      (result.json!.invalidRows as Array<{ reason: string }>)[0]!.reason,
      /template 3 is not in the templates file \(templates\.json\)/,
    );
  });

  it('without a templates file the dry run shows no messages and checks nothing more', async () => {
    const dir = tempDir();
    const result = await runCli(
      ['send', writeCsv(dir, 'codes.csv', CSV), '--dry-run', '--json'],
      envFor(sim, path.join(dir, 'data')),
    );
    assert.equal(result.status, 0);
    assert.equal(result.json!.invalid, 0);
    assert.equal((result.json!.plan as Record<string, unknown>).messages, undefined);
  });

  for (const [what, content, problem] of [
    ['missing', undefined, /no such file/],
    ['not JSON', '{"1": "【某某公司】{1}",}', /not valid JSON/],
    ['not an object', '["【某某公司】{1}"]', /expected a JSON object/],
    ['a text that is not a string', '{"1": 5}', /template 1: expected its approved text/],
  ] as const) {
    it(`a templates file ${what} stops the command: exit 2, one line naming the file and the problem`, async () => {
      const dir = tempDir();
      const file =
        content === undefined ? path.join(dir, 'absent.json') : templatesFile(dir, content);
      const result = await runCli(
        ['send', writeCsv(dir, 'codes.csv', CSV), '--dry-run'],
        envFor(sim, path.join(dir, 'data'), { SMSDROP_TEMPLATES_FILE: file }),
      );
      assert.equal(result.status, 2);
      assert.equal(result.stdout, '');
      const lines = result.stderr.trim().split('\n');
      assert.equal(lines.length, 1, result.stderr);
      assert.ok(
        lines[0]!.startsWith(`smsdrop: E_CONFIG_TEMPLATES: templates file ${file}: `),
        lines[0],
      );
      assert.match(lines[0]!, problem);
    });
  }
});
