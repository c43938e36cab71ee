// `smsdrop report FILE` at a terminal 100 columns wide: every line fits, and each failure's count,
// status and code and the provider's reason can still be read there; `--wide` prints the whole
// table (what to do, the whole message) as wide as it comes.
import assert from 'node:assert/strict';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { columns } from '../../src/report/render.js';
import { cleanUp, runCli, simulator, tempDir, writeCsvFile } from './helpers.js';

after(cleanUp);

const WIDTH = 100;

function widest(text: string): number {
  return Math.max(...text.split('\n').map(columns));
}

describe('report FILE in 100 columns', () => {
  let dataDir: string;
  let sim: Awaited<ReturnType<typeof simulator>>;

  before(async () => {
    const dir = tempDir();
    dataDir = path.join(dir, 'data');
    sim = await simulator({
      blocked: ['13800000002'],
      numberCodes: { '13800000003': '160042', '13800000004': '160033' },
    });
    // a long name, and an invalid row with a long reason
    const name = '2026年双十一会员回馈活动短信发送名单（第三批，已去重，仅限华东大区门店）.csv';
    const file = writeCsvFile(dir, name, [
      'phone,templateId,data1,data2',
      '13800000001,1,a,b',
      '13800000002,1,a,b',
      '13800000003,1,a,b',
      '13800000004,1,a,b',
      '12345,1,a,b',
    ]);
    const sent = await runCli(['--max-per-request', '1', 'send', file], { dataDir, sim });
    assert.equal(sent.code, 3, sent.stdout + sent.stderr);
  });

  it('fits 100 columns and shows each failure: rows, status, code and the reason', async () => {
    const run = await runCli(['report', '1'], { dataDir, sim });
    assert.equal(run.code, 0, run.stderr);
    assert.ok(widest(run.stdout) <= WIDTH, `${widest(run.stdout)} columns:\n${run.stdout}`);
    const failures = run.stdout.split('\n').filter((l) => /^(failed|unknown) /.test(l));
    assert.equal(failures.length, 3, run.stdout);
    for (const code of ['160034', '160042', '160033']) {
      const line = failures.find((l) => l.includes(code));
      assert.ok(line, `a line for ${code}:\n${run.stdout}`);
      assert.match(line, new RegExp(`^failed +${code} +1 `), line);
    }
    const reasons = failures.map((l) => l.split(/ {2,}/).at(-1)!);
    for (const reason of reasons) assert.ok(columns(reason) >= 10, `a reason shown: ${reason}`);
    assert.match(run.stdout, /--wide/, 'says how to see the rest');
  });

  it('--wide prints the whole table: what to do, the whole message', async () => {
    const [narrow, wide] = await Promise.all([
      runCli(['report', '1'], { dataDir, sim }),
      runCli(['report', '1', '--wide'], { dataDir, sim }),
    ]);
    assert.equal(wide.code, 0, wide.stderr);
    assert.ok(widest(wide.stdout) > WIDTH, wide.stdout);
    assert.match(wide.stdout, /what to do/);
    assert.match(wide.stdout, /smsdrop retry 1 --failed/);
    assert.ok(wide.stdout.length > narrow.stdout.length);
  });
});
