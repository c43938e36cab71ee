// Issue 32, item 3: a quoted empty value is a value. A row whose last value is "" was sent one
// value short (trailing empty cells are dropped so one file can mix templates), and the provider
// refused it (160052). Unquoted trailing empty cells are still dropped.
import assert from 'node:assert/strict';
import { Readable } from 'node:stream';
import { describe, it } from 'node:test';
import iconv from 'iconv-lite';
import { markQuotedEmpty, QUOTED_EMPTY } from '../../src/intake/quotedEmpty.js';
import { allRows, tempFile } from './helpers.js';

/** The text markQuotedEmpty makes of pieces given one after the other. */
async function marked(pieces: string[]): Promise<string> {
  let out = '';
  for await (const chunk of Readable.from(pieces).pipe(markQuotedEmpty())) out += String(chunk);
  return out;
}

describe('quoted empty values', () => {
  it('keeps a last value written "" (csv-spectrum empty.csv: 1,"",""), and drops one left blank', async () => {
    const file = tempFile(
      'quoted-empty.csv',
      'phone,data1,data2\r\n13800138000,"a",""\r\n13800138001,a,\r\n13800138002,"",""\r\n13800138003,"","b"\r\n',
    );
    const rows = await allRows(file);
    assert.deepEqual(
      rows.map((r) => [r.datas, r.error]),
      [
        [['a', ''], undefined],
        [['a'], undefined],
        [['', ''], undefined],
        [['', 'b'], undefined], // written "": meant, so no "empty while a later value is not"
      ],
    );
    // A blank left before a filled value is still refused.
    const [gap] = await allRows(tempFile('gap.csv', 'phone,data1,data2\n13800138000,,"b"\n'));
    assert.match(gap!.error ?? '', /data1 is empty while a later value is not/);
  });

  it('tells "" as a cell from "" inside a quoted value, from a quote inside an unquoted one, and in GB18030', async () => {
    const text =
      'phone,data1,data2\n13800138000,"say ""hi""",""\n13800138001,"a,"",b",x\n13800138002,5" x,""\n';
    assert.deepEqual(
      (await allRows(tempFile('inner.csv', text))).map((r) => r.datas),
      [
        ['say "hi"', ''],
        ['a,",b', 'x'],
        ['5" x', ''],
      ],
    );
    const gb = tempFile(
      'gb.csv',
      iconv.encode('手机号,参数1,参数2\r\n13800138000,"张三",""\r\n', 'gb18030'),
    );
    assert.deepEqual((await allRows(gb, { encoding: 'gb18030' }))[0]!.datas, ['张三', '']);
    // A line of "" alone is a blank line, as before.
    assert.equal(
      (await allRows(tempFile('blank.csv', 'phone,data1\n""\n13800138000,a\n'))).length,
      1,
    );
  });

  it('marks the same cells however the text is cut into chunks', async () => {
    const text = 'a,"",b\n"",""\r\n"x""",""\n5" y,"z"""\n""';
    const whole = await marked([text]);
    assert.equal(
      whole,
      `a,"${QUOTED_EMPTY}",b\n"${QUOTED_EMPTY}","${QUOTED_EMPTY}"\r\n"x""","${QUOTED_EMPTY}"\n5" y,"z"""\n"${QUOTED_EMPTY}"`,
    );
    for (let cut = 1; cut < text.length; cut++)
      for (let second = cut + 1; second <= text.length; second++)
        assert.equal(
          await marked([text.slice(0, cut), text.slice(cut, second), text.slice(second)]),
          whole,
          `cut at ${cut} and ${second}`,
        );
  });
});
