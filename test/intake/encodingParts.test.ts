// A file joining text of two encodings (issue 25, item 4): inspectFile names its parts, and a file
// of one encoding is read as before. Real files in a temp dir, read by the real streaming pass.
import assert from 'node:assert/strict';
import path from 'node:path';
import { describe, it } from 'node:test';
import iconv from 'iconv-lite';
import { inspectFile } from '../../src/intake/index.js';
import { describeParts } from '../../src/intake/encodingParts.js';
import { FIXTURES, tempFile } from './helpers.js';

const NAMES = [
  '张三 先生',
  '李四 女士',
  '王五',
  '赵六 先生',
  '孙七 女士',
  '周八',
  '吴九 先生',
  '郑十',
  '钱十一 女士',
  '陈十二',
];

/** Ten rows of a list, starting at phone 138000000NN + offset. */
function rows(offset: number): string[] {
  return NAMES.map((name, i) => `${13800000000 + offset + i},1,${name},${i}元`);
}

/** A "CSV UTF-8" export (BOM, header) with a GB18030 export's ten rows pasted under it. */
function utf8ThenGb(bom = true): Buffer {
  const utf8 = Buffer.from(
    `${bom ? '\uFEFF' : ''}手机号,模板ID,参数1,参数2\r\n${rows(0).join('\r\n')}\r\n`,
  );
  return Buffer.concat([utf8, iconv.encode(`${rows(10).join('\r\n')}\r\n`, 'gb18030')]);
}

describe('inspectFile: files of two encodings', () => {
  it('names the UTF-8 part and the GB18030 part of two exports joined (BOM first)', async () => {
    const inspection = await inspectFile(tempFile('joined.csv', utf8ThenGb()));
    assert.deepEqual(inspection.mixed, {
      parts: [
        { encoding: 'utf-8', firstLine: 1, lastLine: 11 },
        { encoding: 'gb18030', firstLine: 12, lastLine: 21 },
      ],
      partCount: 2,
    });
    assert.equal(
      describeParts(inspection.mixed.parts, 2),
      'UTF-8 from line 1 to 11, GB18030 from line 12 to 21',
    );
  });

  it('finds them without a BOM, GB18030 first, and with LF or lone CR line ends', async () => {
    const gbFirst = Buffer.concat([
      iconv.encode(`手机号,模板ID,参数1\n${rows(0).join('\n')}\n`, 'gb18030'),
      Buffer.from(`${rows(10).join('\r')}\r`),
    ]);
    const inspection = await inspectFile(tempFile('gb-first.csv', gbFirst));
    assert.deepEqual(
      inspection.mixed?.parts.map((p) => [p.encoding, p.firstLine, p.lastLine]),
      [
        ['gb18030', 1, 11],
        ['utf-8', 12, 21],
      ],
    );
  });

  it('finds one UTF-8 row typed into a GB18030 list, however the reads cut it', async () => {
    const gb = iconv.encode(
      `手机号,模板ID,参数1\r\n${Array.from({ length: 40000 }, (_, i) => `${13900000000 + i},1,李四女士`).join('\r\n')}\r\n`,
      'gb18030',
    );
    const file = tempFile(
      'one-row.csv',
      Buffer.concat([
        gb,
        Buffer.from('13800000000,1,张三 先生\r\n'),
        gb.subarray(gb.indexOf(0x0a) + 1),
      ]),
    );
    const parts = (await inspectFile(file)).mixed?.parts.map((p) => [
      p.encoding,
      p.firstLine,
      p.lastLine,
    ]);
    assert.deepEqual(parts, [
      ['gb18030', 1, 40001],
      ['utf-8', 40002, 40002],
      ['gb18030', 40003, 80002],
    ]);
  });

  it('counts the parts beyond the six it names', async () => {
    const pieces = Array.from({ length: 8 }, (_, i) =>
      i % 2 === 0
        ? Buffer.from('13800000000,张三\n')
        : iconv.encode('13800000000,张三\n', 'gb18030'),
    );
    const mixed = (await inspectFile(tempFile('eight.csv', Buffer.concat(pieces)))).mixed!;
    assert.equal(mixed.partCount, 8);
    assert.match(
      describeParts(mixed.parts, mixed.partCount),
      /GB18030 at line 6, and 2 more part\(s\)$/,
    );
  });

  it('reads files of one encoding as before: GB18030, UTF-8 with and without BOM', async () => {
    const gb = await inspectFile(path.join(FIXTURES, 'gb18030-excel.csv'));
    assert.deepEqual([gb.encoding, gb.mixed], ['gb18030', undefined]);
    for (const name of ['utf8-bom-crlf.csv', 'utf8-plain-lf.csv']) {
      const utf8 = await inspectFile(path.join(FIXTURES, name));
      assert.deepEqual([utf8.encoding, utf8.mixed], ['utf-8', undefined], name);
    }
    const bigGb = iconv.encode(
      `手机号,参数1\r\n${Array.from({ length: 20000 }, (_, i) => `${13900000000 + i},${NAMES[i % 10]},${i}元`).join('\r\n')}\r\n`,
      'gb18030',
    );
    assert.deepEqual(
      await inspectFile(tempFile('big-gb.csv', bigGb)).then((i) => [i.encoding, i.mixed]),
      ['gb18030', undefined],
    );
  });

  it('keeps a UTF-8 file with a few stray bytes UTF-8 (its rows with them are refused at intake), BOM or not', async () => {
    const rowsText = Array.from(
      { length: 300 },
      (_, i) => `${13800000000 + i},您好张三,5分钟`,
    ).join('\n');
    for (const bom of ['', '\uFEFF']) {
      const stray = Buffer.concat([
        Buffer.from(`${bom}phone,data1,data2\n${rowsText}\n1390000000`),
        Buffer.from([0xe9]),
        Buffer.from(',caf\n'),
      ]);
      const inspection = await inspectFile(tempFile('stray.csv', stray));
      assert.deepEqual([inspection.encoding, inspection.mixed], ['utf-8', undefined]);
    }
  });
});
