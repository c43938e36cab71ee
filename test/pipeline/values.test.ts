// Issue 32, item 3, end to end: a quoted empty value is a value, and rows of one template given
// different numbers of values are flagged by the dry run and by `send`'s summary. Before, a row
// ending "" was sent one value short and refused by the provider (160052), found only after
// sending and only without a templates file. The simulator takes template 1 with 2 values.
import assert from 'node:assert/strict';
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

const UNEVEN = [
  'phone,templateId,data1,data2',
  '13800000001,1,1234,5',
  '13800000002,1,1234,6',
  '13800000003,1,9999,5',
  '13800000004,1,1234,', // one value short: the trailing empty cell is dropped
  '',
].join('\n');

describe('values', () => {
  let sim: RunningSimulator;
  before(async () => (sim = await startSim()));
  after(() => sim.close());

  it('a row whose last value is "" is sent with that empty value, and accepted', async () => {
    const dir = tempDir();
    const file = writeCsv(
      dir,
      'quoted.csv',
      'phone,templateId,data1,data2\r\n13800000011,1,"a",""\r\n',
    );
    const before = sim.records.length;
    const result = await runCli(['send', file, '--json'], envFor(sim, path.join(dir, 'data')));
    assert.equal(result.status, 0, result.stdout);
    assert.deepEqual(
      deliveries({ ...sim, records: sim.records.slice(before) }),
      new Map([[messageKey(CREDS.appId, '1', ['a', ''], '13800000011'), 1]]),
    );
    assert.equal(result.json!.unevenValues, undefined);
  });

  it('the dry run flags a template given different numbers of values, naming the counts and lines; nothing is sent', async () => {
    const dir = tempDir();
    const file = writeCsv(dir, 'uneven.csv', UNEVEN);
    const env = envFor(sim, path.join(dir, 'data'));
    const before = sim.records.length;
    const json = await runCli(['send', file, '--dry-run', '--json'], env);
    assert.equal(json.status, 0, json.stderr);
    assert.deepEqual(json.json!.unevenValues, [
      {
        templateId: '1',
        counts: [
          { values: 2, rows: 3, firstLine: 2 },
          { values: 1, rows: 1, firstLine: 5 },
        ],
      },
    ]);
    const text = await runCli(['send', file, '--dry-run'], env);
    assert.match(
      text.stdout,
      /uneven values: template 1 is given 2 value\(s\) in 3 row\(s\) \(first at line 2\), 1 value\(s\) in 1 row\(s\) \(first at line 5\): .*the provider refuses the messages of some of these rows \(160052\)/,
    );
    assert.equal(sim.records.length, before);
  });

  it("send's summary flags it too (the short row is refused by the provider)", async () => {
    const dir = tempDir();
    const result = await runCli(
      ['send', writeCsv(dir, 'uneven.csv', UNEVEN), '--json'],
      envFor(sim, path.join(dir, 'data')),
    );
    assert.equal(result.status, 3);
    assert.deepEqual(
      (result.json!.unevenValues as Array<{ templateId: string }>).map((u) => u.templateId),
      ['1'],
    );
    assert.equal(result.json!.failed, 1);
  });
});
