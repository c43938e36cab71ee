// SMSDROP_PRICE_PER_SEGMENT (and SMSDROP_CURRENCY): the dry run and `report FILE` show the cost,
// reckoned in decimal from the billable segments (the templates file counts them; without it, one
// per number at least); a price that is no decimal stops the command with the setting's code.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { tempDir } from '../daemon/helpers.js';
import { smsdrop } from './helpers.js';

const dirs: string[] = [];
after(() => {
  for (const d of dirs) fs.rmSync(d, { recursive: true, force: true });
});

describe('the cost of a file', () => {
  let dir: string;
  let list: string;
  let env: Record<string, string>;

  before(() => {
    dir = tempDir('pricing');
    dirs.push(dir);
    const templates = path.join(dir, 'templates.json');
    fs.writeFileSync(templates, JSON.stringify({ '1': '【测试】您的验证码是{1}，{2}分钟内有效' }));
    list = path.join(dir, 'list.csv');
    // Two messages of one segment, and one of 2: its first value alone is 70 characters.
    fs.writeFileSync(
      list,
      `phone,templateId,data1,data2\n13800000001,1,123456,5\n13800000002,1,654321,5\n13800000003,1,${'x'.repeat(70)},5\n`,
    );
    env = {
      SMSDROP_DATA_DIR: path.join(dir, 'data'),
      SMSDROP_TEMPLATES_FILE: templates,
      SMSDROP_PRICE_PER_SEGMENT: '0.045',
      SMSDROP_CURRENCY: 'CNY',
    };
  });

  it('the dry run shows 4 billable segments × 0.045 = 0.18 CNY, also in --json', async () => {
    const [text, json] = await Promise.all([
      smsdrop(['send', list, '--dry-run'], env),
      smsdrop(['send', list, '--dry-run', '--json'], env),
    ]);
    assert.equal(text.status, 0, text.stderr);
    assert.match(text.stdout, /^billable segments: 4 /m);
    assert.match(
      text.stdout,
      /^cost {7}0\.18 CNY for the 3 number\(s\) of the plan: 4 billable segment\(s\) × 0\.045$/m,
    );
    assert.equal(json.status, 0, json.stderr);
    const plan = (JSON.parse(json.stdout) as { plan: { cost: unknown } }).plan;
    assert.deepEqual(plan.cost, {
      amount: '0.18',
      currency: 'CNY',
      pricePerSegment: '0.045',
      segments: 4,
      atLeast: false,
    });
  });

  it('without the templates file, the dry run says at least one segment per number; no currency: a plain number', async () => {
    const run = await smsdrop(['send', list, '--dry-run'], {
      SMSDROP_DATA_DIR: path.join(dir, 'data'),
      SMSDROP_PRICE_PER_SEGMENT: '0.05',
    });
    assert.equal(run.status, 0, run.stderr);
    assert.match(
      run.stdout,
      /^cost {7}at least 0\.15 for the 3 number\(s\) of the plan: 3 segment\(s\) × 0\.05, one per number/m,
    );
  });

  it('report FILE shows what the accepted messages cost, in the table and in JSON', async () => {
    const sent = await smsdrop(['send', list], env);
    assert.equal(sent.status, 0, sent.stdout + sent.stderr);
    const [table, json] = await Promise.all([
      smsdrop(['report', 'list.csv'], env),
      smsdrop(['report', 'list.csv', '--format', 'json'], env),
    ]);
    assert.equal(table.status, 0, table.stderr);
    assert.match(
      table.stdout,
      /^cost {7}0\.18 CNY for the 3 accepted number\(s\): 4 billable segment\(s\) × 0\.045$/m,
    );
    const cost = (JSON.parse(json.stdout) as { cost: { amount: string } }).cost;
    assert.equal(cost.amount, '0.18');
  });

  it('no price set: no cost shown', async () => {
    const { SMSDROP_PRICE_PER_SEGMENT: _, ...noPrice } = env;
    const run = await smsdrop(['send', list, '--dry-run'], noPrice);
    assert.equal(run.status, 0, run.stderr);
    assert.doesNotMatch(run.stdout, /^cost/m);
  });

  it('a price that is no decimal stops the command: exit 2, the setting named', async () => {
    const run = await smsdrop(['send', list, '--dry-run'], {
      ...env,
      SMSDROP_PRICE_PER_SEGMENT: '4.5 分',
    });
    assert.equal(run.status, 2, run.stdout);
    assert.match(
      run.stderr,
      /^smsdrop: E_CONFIG_PRICE_PER_SEGMENT: .*SMSDROP_PRICE_PER_SEGMENT.*expected a decimal price/m,
    );
  });
});
