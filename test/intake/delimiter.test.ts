// Tab-separated lists and UTF-16 text: which separator and encoding inspectFile finds, and what
// readRows makes of them.
import assert from 'node:assert/strict';
import { statSync } from 'node:fs';
import { describe, it } from 'node:test';
import { countGroups, GroupCounts } from '../../src/intake/groupCounts.js';
import { inspectFile } from '../../src/intake/index.js';
import { allRows, DEFAULTS, tempFile } from './helpers.js';

const utf16le = (text: string) => Buffer.from(`\uFEFF${text}`, 'utf16le');

describe('the separator of a list', () => {
  const cases: Array<[string, string, string, ',' | '\t']> = [
    ['a comma header', 'a.csv', 'phone,template\n13800138000,1\n', ','],
    ['a tab header in a .csv', 'b.csv', 'phone\ttemplate\n13800138000\t1\n', '\t'],
    ['a comma header in a .tsv', 'c.tsv', 'phone,template\n13800138000,1\n', ','],
    [
      'a tab header under title rows',
      'd.csv',
      '客户名单\n2024-01-01\n手机号\t模板\n13800138000\t1\n',
      '\t',
    ],
    ['a quoted tab header', 'e.csv', '"phone"\t"template"\n13800138000\t1\n', '\t'],
    ['comma cells holding tabs', 'f.csv', 'phone,template,data1\n13800138000,1,a\tb\n', ','],
    ['a tab header with a comma in a cell', 'g.csv', 'phone\tname, title\n13800138000\tx\n', '\t'],
    ['no phone column in a .txt: its name says', 'h.txt', 'a,b\n1,2\n', '\t'],
    ['no phone column in a .csv: its name says', 'i.csv', 'a\tb\n1\t2\n', ','],
  ];
  for (const [what, name, text, delimiter] of cases)
    it(`${what}: ${JSON.stringify(delimiter)}`, async () => {
      assert.equal((await inspectFile(tempFile(name, text))).delimiter, delimiter);
    });
});

describe('UTF-16 text with a byte order mark', () => {
  it('is UTF-16LE or UTF-16BE by its mark, whatever SMSDROP_ENCODING or the name says', async () => {
    const text = 'phone\tdata1\r\n13800138000\t张三\r\n';
    const le = await inspectFile(tempFile('x.gb18030.txt', utf16le(text)), 'gb18030');
    assert.deepEqual([le.encoding, le.delimiter, le.exact], ['utf-16le', '\t', true]);
    const be = await inspectFile(tempFile('y.csv', utf16le(text).swap16()));
    assert.deepEqual([be.encoding, be.delimiter, be.exact], ['utf-16be', '\t', true]);
  });

  it('finds quotes and line feeds by code unit, not by byte (丢 is 22 4E, 上 0A 4E)', async () => {
    const plain = await inspectFile(
      tempFile('p.txt', utf16le('phone\tdata1\n13800138000\t丢上\n')),
    );
    assert.deepEqual([plain.quoted, plain.longestLine], [false, 2 * '13800138000\t丢上'.length]);
    const quoted = await inspectFile(tempFile('q.txt', utf16le('phone\tdata1\n1\t"a"\n')));
    assert.equal(quoted.quoted, true);
  });

  it('is not exact with a surrogate left unpaired: its row is invalid', async () => {
    const file = tempFile(
      's.txt',
      utf16le('phone\ttemplate\tdata1\r\n13800138000\t1\tx\uD800y\r\n'),
    );
    assert.equal((await inspectFile(file)).exact, false);
    const options = { encoding: 'utf-16le', delimiter: '\t', decodedExactly: false } as const;
    const [row] = await allRows(file, options);
    assert.match(row?.error ?? '', /bytes that are not text in the file's encoding/);
  });

  it('reads quoted cells holding tabs, quotes and line breaks, and a quoted empty value', async () => {
    const text = 'phone\ttemplate\tdata1\tdata2\r\n13800138000\t1\t"a\tb ""c""\r\nd"\t""\r\n';
    const file = tempFile('quoted.txt', utf16le(text));
    const rows = await allRows(file, { encoding: 'utf-16le', delimiter: '\t' });
    assert.deepEqual(
      rows.map((r) => [r.line, r.phone, r.datas]),
      [[2, '13800138000', ['a\tb "c"\r\nd', '']]],
    );
  });
});

describe('group counts of tab-separated and UTF-16 lists', () => {
  for (const [what, encode, encoding] of [
    ['UTF-8 with tabs', (t: string) => Buffer.from(t), 'utf-8'],
    ['UTF-16LE with tabs', utf16le, 'utf-16le'],
  ] as const)
    it(`${what}: agree with intake, row for row`, async () => {
      const text = [
        '手机号\t模板\t参数1\t参数2',
        '13800000001\t1\t上海\tb',
        '13800000002\t2\tx\t',
        '13800000003\t1\t上海\tb',
        '',
      ].join('\r\n');
      const file = tempFile(`counts-${encoding}.txt`, encode(text));
      const options = {
        ...DEFAULTS,
        encoding,
        delimiter: '\t',
        bytes: statSync(file).size,
      } as const;
      const counts = await countGroups(file, options);
      assert.ok(counts, 'counts were made');
      const rows = await allRows(file, options);
      const last = rows
        .filter((r) => counts.rowRead(GroupCounts.slotOf(r.appId!, r.templateId!, r.datas)))
        .map((r) => r.line);
      assert.deepEqual(last, [3, 4]);
    });
});
