// Counting a file's groups before intake (src/intake/groupCounts.ts): the count must agree with
// what intake itself reads, row for row, or a group's batch could go before its last row.
import assert from 'node:assert/strict';
import { statSync } from 'node:fs';
import { describe, it } from 'node:test';
import iconv from 'iconv-lite';
import { countGroups, GroupCounts } from '../../src/intake/groupCounts.js';
import type { IntakeOptions } from '../../src/intake/index.js';
import { allRows, DEFAULTS, tempFile } from './helpers.js';

/**
 * Feeds intake's own rows of the file to the counts, in order. Returns the lines at which the
 * counts said "the group's last row", and the lines where they should have: the last row of the
 * groups in each slot (groups that share a slot are counted together), and how many groups.
 */
async function lastRowsSeen(
  file: string,
  options: Partial<IntakeOptions> = {},
): Promise<{ said: number[]; truth: number[]; groups: number }> {
  const all = { ...DEFAULTS, ...options, bytes: statSync(file).size };
  const counts = await countGroups(file, all);
  assert.ok(counts, 'counts were made');
  const rows = (await allRows(file, options)).filter(
    (r) => r.appId !== undefined && r.templateId !== undefined,
  );
  const said = rows
    .filter((r) => counts.rowRead(GroupCounts.slotOf(r.appId!, r.templateId!, r.datas)))
    .map((r) => r.line);
  const lastOfSlot = new Map<number, number>();
  const groups = new Set<string>();
  for (const r of rows) {
    lastOfSlot.set(GroupCounts.slotOf(r.appId!, r.templateId!, r.datas), r.line);
    groups.add(JSON.stringify([r.appId, r.templateId, r.datas]));
  }
  return { said, truth: [...lastOfSlot.values()].sort((a, b) => a - b), groups: groups.size };
}

describe('group counts', () => {
  it('say "last row" exactly at each group\'s last row, with invalid rows, blank lines, padding and defaults', async () => {
    const file = tempFile(
      'groups.csv',
      [
        'phone,templateId,appId,参数1,参数2',
        '13800000001,1,,a,b', // group (default app, 1, [a, b])
        '13800000002,1,app-default,a,b', // the same group: the default app written out
        '',
        '12345,2,,x,', // invalid phone, but in a group: (default, 2, [x])
        '13800000003,1,,a,b,,,', // padded with commas: still the first group
        ',,,,',
        '13800000004,2,,x', // (default, 2, [x]): trailing empty value dropped
        '13800000005,,,only', // default template: its own group
        "13800000006,1,,'=a,b", // an exported (guarded) cell reads as "=a"
      ].join('\n'),
    );
    const { said, truth } = await lastRowsSeen(file);
    assert.deepEqual(said, truth);
    assert.deepEqual(said, [6, 8, 9, 10]);
  });

  it('agree with intake on CRLF, CR and LF line ends split across many reads, and after a BOM', async () => {
    const ends = ['\r\n', '\n', '\r'];
    let text = '\uFEFF手机号,模板ID,参数1\r\n';
    // Enough rows for many 16 KB reads, so line ends fall on every side of a read's edge.
    for (let i = 0; i < 6000; i++)
      text += `1380000${String(i % 5000).padStart(4, '0')},${1 + (i % 3)},v${i % 977}${ends[i % 3]}`;
    const file = tempFile('mixed-ends.csv', text);
    const { said, truth, groups } = await lastRowsSeen(file);
    assert.deepEqual(said, truth);
    assert.ok(
      said.length >= groups * 0.99,
      `${groups} groups, ${said.length} slots: the table spreads them`,
    );
  });

  it('agree with intake on a GB18030 file (Chinese Excel)', async () => {
    const lines = ['手机号,模板,参数1,参数2'];
    for (let i = 0; i < 3000; i++)
      lines.push(
        `1390000${String(i).padStart(4, '0')},7,${['张三', '李四', '王五'][i % 3]},${i % 10 === 0 ? `订单${i}` : '您好'}`,
      );
    const file = tempFile('gb.csv', iconv.encode(lines.join('\r\n'), 'gb18030'));
    const { said, truth } = await lastRowsSeen(file, { encoding: 'gb18030' });
    assert.deepEqual(said, truth);
  });

  it('count only the bytes intake will read', async () => {
    const file = tempFile(
      'grown.csv',
      'phone,templateId,参数1\n13800000001,1,a\n13800000002,1,a\n',
    );
    const firstRowEnd = Buffer.byteLength('phone,templateId,参数1\n13800000001,1,a\n');
    const counts = await countGroups(file, { ...DEFAULTS, bytes: firstRowEnd });
    assert.equal(
      counts!.rowRead(GroupCounts.slotOf('app-default', '1', ['a'])),
      true,
      'the row past the inspected bytes is not counted',
    );
  });

  it('stop saying "last row" once a row turns up that they did not count', async () => {
    const file = tempFile('two.csv', 'phone,templateId,参数1\n13800000001,1,a\n13800000002,1,b\n');
    const counts = (await countGroups(file, { ...DEFAULTS, bytes: statSync(file).size }))!;
    const a = GroupCounts.slotOf('app-default', '1', ['a']);
    assert.equal(counts.rowRead(a), true);
    assert.equal(counts.rowRead(a), false, 'a second row of a: the file is not what was counted');
    assert.equal(
      counts.rowRead(GroupCounts.slotOf('app-default', '1', ['b'])),
      false,
      'and nothing they say is trusted any more',
    );
  });

  it('are not made when the file is shorter than the bytes inspected', async () => {
    const file = tempFile('short.csv', 'phone,templateId,参数1\n13800000001,1,a\n');
    assert.equal(
      await countGroups(file, { ...DEFAULTS, bytes: statSync(file).size + 10 }),
      undefined,
    );
  });

  it('say nothing once distrusted, or when the file has no usable header', async () => {
    const file = tempFile('one.csv', 'phone,templateId,参数1\n13800000001,1,a\n');
    const counts = (await countGroups(file, { ...DEFAULTS, bytes: statSync(file).size }))!;
    counts.distrust();
    assert.equal(counts.rowRead(GroupCounts.slotOf('app-default', '1', ['a'])), false);
    const noHeader = tempFile('no-header.csv', '13800000001,1,a\n');
    assert.equal(
      await countGroups(noHeader, { ...DEFAULTS, bytes: statSync(noHeader).size }),
      undefined,
    );
  });
});

// Intake does not wait for the count (it runs in a thread of its own): rows read before the count
// is complete are counted down all the same, and nothing is said until it is complete.
describe('group counts made while intake reads', () => {
  const slot = (value: string) => GroupCounts.slotOf('app-default', '1', [value]);
  const csv = (values: string[]) =>
    `phone,templateId,参数1\n${values.map((v, i) => `1380000${String(i).padStart(4, '0')},1,${v}`).join('\n')}\n`;

  it('count down the rows read before they were complete, and say "last row" only after', async () => {
    const file = tempFile('while.csv', csv(['a', 'a', 'b', 'a', 'c', 'c']));
    const counts = GroupCounts.start(file, { ...DEFAULTS, bytes: statSync(file).size });
    // Nothing of the count's thread is taken in before this synchronous code yields.
    assert.deepEqual(
      [slot('a'), slot('a'), slot('b')].map((s) => counts.rowRead(s)),
      [false, false, false],
      'not complete: nothing said',
    );
    assert.equal(counts.ready, false);
    await counts.done;
    assert.equal(counts.ready, true);
    assert.equal(
      counts.rowRead(slot('a')),
      true,
      "a's third row is its last: the two read before count",
    );
    assert.deepEqual([counts.rowRead(slot('c')), counts.rowRead(slot('c'))], [false, true]);
    // b ended before the count was complete: its batch waits for the end of the file, as without
    // counts.
  });

  it('are not trusted when intake read more rows of a group than the whole file has', async () => {
    const file = tempFile('rewritten.csv', csv(['a', 'z', 'z']));
    const counts = GroupCounts.start(file, { ...DEFAULTS, bytes: statSync(file).size });
    counts.rowRead(slot('a'));
    counts.rowRead(slot('a'));
    counts.rowRead(slot('z'));
    await counts.done;
    assert.equal(counts.ready, false);
    assert.equal(
      counts.rowRead(slot('z')),
      false,
      "z's last row, but the file is not the one counted",
    );
  });

  it('are not trusted when intake read another header, before or after they were complete', async () => {
    const file = tempFile('header.csv', csv(['a']));
    const options = { ...DEFAULTS, bytes: statSync(file).size };
    const before = GroupCounts.start(file, options);
    before.headerRead(['phone', 'appId', '参数1']);
    await before.done;
    assert.equal(before.ready, false);
    const after = GroupCounts.start(file, options);
    await after.done;
    after.headerRead(['phone', 'appId', '参数1']);
    assert.equal(after.rowRead(slot('a')), false);
    const same = GroupCounts.start(file, options);
    same.headerRead(['phone', 'templateId', '参数1']);
    await same.done;
    assert.equal(same.rowRead(slot('a')), true, 'the same header: trusted');
  });

  it('stop when intake is over before them, and then say nothing', async () => {
    const file = tempFile(
      'stopped.csv',
      csv(Array.from({ length: 50_000 }, (_, i) => `v${i % 7}`)),
    );
    const counts = GroupCounts.start(file, { ...DEFAULTS, bytes: statSync(file).size });
    await counts.stop();
    assert.equal(counts.ready, false);
  });
});
