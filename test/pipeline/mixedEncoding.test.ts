// Issue 25, item 4: a file joining a UTF-8 export and a GB18030 export is refused, naming where
// each part starts; nothing of it reaches the provider (read whole as GB18030, its UTF-8 rows
// went out as 寮犱笁 鍏堢敓, exit 0). Files of one encoding still go as written. The real CLI
// against the simulator, checked against what the simulator accepted.
import assert from 'node:assert/strict';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
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

const NAMES = ['张三', '李四', '王五', '赵六', '孙七', '周八', '吴九', '郑十', '钱十一', '陈十二'];
const HEADER = '手机号,模板ID,参数1,参数2';

/** Ten rows, phones from 13800000000 + offset, each "NAME 先生" and a code. */
function rows(offset: number): string[] {
  return NAMES.map((name, i) => `${13800000000 + offset + i},1,${name} 先生,${1000 + i}`);
}

/** The messages ten rows should deliver. */
function expected(offset: number): Map<string, number> {
  return new Map(
    NAMES.map((name, i) => [
      messageKey(
        CREDS.appId,
        '1',
        [`${name} 先生`, String(1000 + i)],
        String(13800000000 + offset + i),
      ),
      1,
    ]),
  );
}

describe('a file of two encodings', () => {
  let sim: RunningSimulator;
  before(async () => (sim = await startSim()));
  after(() => sim.close());

  for (const bom of [true, false]) {
    it(`a UTF-8 export${bom ? ' (BOM)' : ''} with a GB18030 export under it is refused, naming both parts; nothing is sent`, async () => {
      const dir = tempDir();
      const utf8 = Buffer.from(`${bom ? '\uFEFF' : ''}${HEADER}\r\n${rows(0).join('\r\n')}\r\n`);
      const file = writeCsv(
        dir,
        'joined.csv',
        Buffer.concat([utf8, iconv.encode(`${rows(10).join('\r\n')}\r\n`, 'gb18030')]),
      );
      const before = sim.records.length;
      const result = await runCli(['send', file, '--json'], envFor(sim, path.join(dir, 'data')));
      assert.equal(result.status, 2, result.stderr);
      assert.equal(sim.records.length, before);
      assert.match(
        String(result.json!.reason),
        /joined\.csv: the file joins text in two encodings: UTF-8 from line 1 to 11, GB18030 from line 12 to 21; .*save it again as CSV UTF-8/,
      );
    });
  }

  it('the dry run refuses it too, and the text output names the parts', async () => {
    const dir = tempDir();
    const gbFirst = Buffer.concat([
      iconv.encode(`${HEADER}\r\n${rows(0).join('\r\n')}\r\n`, 'gb18030'),
      Buffer.from(`${rows(10).join('\r\n')}\r\n`),
    ]);
    const result = await runCli(
      ['send', writeCsv(dir, 'gb-first.csv', gbFirst), '--dry-run'],
      envFor(sim, path.join(dir, 'data')),
    );
    assert.equal(result.status, 2);
    assert.match(
      result.stdout + result.stderr,
      /GB18030 from line 1 to 11, UTF-8 from line 12 to 21/,
    );
  });

  it('each part alone is sent as written: GB18030, UTF-8 with and without BOM', async () => {
    const dir = tempDir();
    const files = [
      {
        name: 'gb.csv',
        content: iconv.encode(`${HEADER}\r\n${rows(0).join('\r\n')}\r\n`, 'gb18030'),
        offset: 0,
      },
      {
        name: 'bom.csv',
        content: Buffer.from(`\uFEFF${HEADER}\r\n${rows(20).join('\r\n')}\r\n`),
        offset: 20,
      },
      {
        name: 'plain.csv',
        content: Buffer.from(`${HEADER}\n${rows(40).join('\n')}\n`),
        offset: 40,
      },
    ];
    for (const f of files) {
      const before = sim.records.length;
      const result = await runCli(
        ['send', writeCsv(dir, f.name, f.content), '--json'],
        envFor(sim, path.join(dir, 'data')),
      );
      assert.equal(result.status, 0, `${f.name}: ${result.stderr}`);
      assert.deepEqual(
        deliveries({ ...sim, records: sim.records.slice(before) }),
        expected(f.offset),
        f.name,
      );
    }
  });
});
