// A large group (10,000 numbers of one message, a number twice in it) sent after another file of
// the same data directory: the repeat guard and the settling of doubts both read the groups of the
// journal, once in arrays and once as objects. When one prepared statement served both, switched
// into array mode by the first, the second read `undefined` and the file was refused part-way,
// for good. The real CLI against the simulator; the simulator's record is the ground truth.
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

const NUMBERS = 10_000;
const phoneOf = (i: number) => `13${5 + (i % 4)}024${String(i).padStart(5, '0')}`;

/**
 * The file: 10,000 numbers sharing one message, and the first one written again at the end.
 */
function bigGroupCsv(): string {
  let s = 'phone,templateId,data1,data2\n';
  for (let i = 0; i < NUMBERS; i++) s += `${phoneOf(i)},1,g10k,x\n`;
  return `${s}${phoneOf(0)},1,g10k,x\n`;
}

describe('a large group after another file', () => {
  let sim: RunningSimulator;
  before(async () => (sim = await startSim()));
  after(async () => sim.close());

  it('sends each of its 10,000 numbers once, and the file ends done with its statuses adding up', async () => {
    const dir = tempDir();
    const env = envFor(sim, path.join(dir, 'data'));
    const small = await runCli(
      [
        'send',
        writeCsv(dir, 'b.csv', 'phone,templateId,data1,data2\n13800138000,1,x,y\n'),
        '--json',
      ],
      env,
    );
    assert.equal(small.status, 0, small.stderr);

    const big = writeCsv(dir, 'a.csv', bigGroupCsv());
    const sent = await runCli(['send', big, '--json'], env);
    assert.equal(sent.status, 0, `${sent.stdout}${sent.stderr}`);
    const json = sent.json!;
    assert.deepEqual(
      [
        json.status,
        json.rows,
        json.accepted,
        json.duplicates,
        json.pending,
        json.failed,
        json.unknown,
        json.invalid,
      ],
      ['done', NUMBERS + 1, NUMBERS, 1, 0, 0, 0, 0],
    );
    const counts = deliveries(sim);
    for (let i = 0; i < NUMBERS; i++)
      assert.equal(
        counts.get(messageKey(CREDS.appId, '1', ['g10k', 'x'], phoneOf(i))),
        1,
        `${phoneOf(i)} once`,
      );

    const again = await runCli(['send', big, '--json'], env);
    assert.deepEqual(
      [again.status, again.json!.status, again.json!.accepted],
      [0, 'already-sent', NUMBERS],
      again.stderr,
    );
    assert.equal(
      [...deliveries(sim).values()].reduce((a, b) => a + b, 0),
      NUMBERS + 1,
      'nothing sent again',
    );
  });
});
