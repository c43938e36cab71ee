// readRows on real files: encodings, CSV quoting, line numbers, values as written, row errors
// that never stop the other rows, and the file-level refusals.
import assert from 'node:assert/strict';
import path from 'node:path';
import { describe, it } from 'node:test';
import iconv from 'iconv-lite';
import { FileRefusedError, readRows, type ColumnMap } from '../../src/intake/index.js';
import { allRows, DEFAULTS, FIXTURES, TEMP_DIR, tempFile } from './helpers.js';

/** Rows reduced to what a test looks at. */
const brief = (rows: Awaited<ReturnType<typeof allRows>>) =>
  rows.map((r) => ({ line: r.line, phone: r.phone, datas: r.datas, error: r.error }));

async function refusal(
  file: string,
  options: Parameters<typeof allRows>[1] = {},
): Promise<FileRefusedError> {
  try {
    await allRows(file, options);
  } catch (err) {
    assert.ok(err instanceof FileRefusedError, `expected FileRefusedError, got ${String(err)}`);
    assert.equal(err.file, file);
    assert.ok(err.message.startsWith(file), 'the message names the file');
    return err;
  }
  assert.fail('the file was accepted');
}

describe('readRows: encodings', () => {
  it('reads Excel "CSV UTF-8": BOM, CRLF, quoted commas, quotes and line breaks, blank lines', async () => {
    const rows = await allRows(path.join(FIXTURES, 'utf8-bom-crlf.csv'));
    assert.deepEqual(brief(rows), [
      { line: 2, phone: '13800138000', datas: ['a, b', 'say "hi"'], error: undefined },
      { line: 4, phone: '13900139000', datas: ['two\r\nlines', 'x'], error: undefined },
      { line: 6, phone: '13700137000', datas: ['crlf\r\ninside', ' y '], error: undefined },
      { line: 10, phone: '13600136000', datas: [], error: undefined },
      { line: 11, phone: '13500135000', datas: ['v1'], error: undefined },
    ]);
    assert.deepEqual(
      rows.map((r) => r.extras),
      [['first'], ['second'], ['third'], ['fourth'], ['fifth']],
    );
    assert.ok(rows.every((r) => r.templateId === '1' && r.appId === 'app-default'));
  });

  it('reads a Chinese Excel export in GB18030: header, values, a 4-byte character, skipped ",,,," row', async () => {
    const rows = await allRows(path.join(FIXTURES, 'gb18030-excel.csv'), { encoding: 'gb18030' });
    assert.deepEqual(brief(rows), [
      { line: 2, phone: '13800138000', datas: ['张三', '123456'], error: undefined },
      { line: 3, phone: undefined, datas: ['李四', '654321'], error: rows[1]?.error },
      { line: 4, phone: '13700137000', datas: ['王㐀五', '111111'], error: undefined },
      { line: 6, phone: '15800158000', datas: ['赵六', '222222'], error: undefined },
    ]);
    assert.match(rows[1]?.error ?? '', /scientific notation/);
    assert.equal(rows[1]?.phoneRaw, '1.39001E+10');
    assert.deepEqual(rows[0]?.extras, ['北京市, 朝阳区']);
    assert.deepEqual(rows[3]?.extras, ['']);
  });

  it('reads GB18030 made on the fly, across many read chunks', async () => {
    const lines = ['手机号码,变量1'];
    for (let i = 0; i < 20000; i++) lines.push(`${13800000000 + i},中文值${i}`);
    const file = tempFile('gb-many.csv', iconv.encode(lines.join('\r\n'), 'gb18030'));
    const rows = await allRows(file, { encoding: 'gb18030' });
    assert.equal(rows.length, 20000);
    assert.ok(
      rows.every(
        (r, i) => r.datas[0] === `中文值${i}` && r.line === i + 2 && r.error === undefined,
      ),
    );
  });

  it('refuses a row whose value holds a stray byte (sent, it would reach the recipient damaged); one in a column not sent is kept', async () => {
    const file = tempFile(
      'stray-bytes.csv',
      Buffer.concat([
        Buffer.from('phone,data1,data2,note\n13800000001,您好张三,5分钟,ok\n13800000002,caf'),
        Buffer.from([0xe9]), // Latin-1 é in a UTF-8 file
        Buffer.from(',5分钟,ok\n13800000003,您好李四,5分钟,'),
        Buffer.from([0xe9]),
        Buffer.from('\n'),
      ]),
    );
    const rows = await allRows(file);
    assert.deepEqual(
      rows.map((r) => r.datas),
      [
        ['您好张三', '5分钟'],
        ['caf\uFFFD', '5分钟'],
        ['您好李四', '5分钟'],
      ],
    );
    assert.equal(rows[0]!.error, undefined);
    assert.match(rows[1]!.error ?? '', /bytes that are not text in the file's encoding/);
    assert.equal(
      rows[2]!.error,
      undefined,
      'the stray byte is in the note column, which is not sent',
    );
  });

  it('reads plain UTF-8 without BOM, LF line ends', async () => {
    const rows = await allRows(path.join(FIXTURES, 'utf8-plain-lf.csv'));
    assert.deepEqual(brief(rows), [
      { line: 2, phone: '13800138000', datas: ['hello'], error: undefined },
      {
        line: 3,
        phone: undefined,
        datas: ['bad number'],
        error: 'not a mainland China mobile number (11 digits starting 13 to 19)',
      },
      { line: 4, phone: '13900139000', datas: ['world'], error: undefined },
    ]);
    assert.ok(rows.every((r) => r.templateId === '7'));
  });
});

describe('readRows: line numbers', () => {
  it('counts lines inside quoted cells (LF, CRLF, CR) and blank lines, header not on line 1', async () => {
    const text =
      '\n\r\nphone,data1\n13800138000,"a\nb\r\nc\rd"\n\n   \n13900139000,x\r\n\r\n13700137000,"\n"\n13600136000,y';
    const rows = await allRows(tempFile('lines.csv', text));
    assert.deepEqual(
      rows.map((r) => [r.line, r.phone]),
      [
        [4, '13800138000'],
        [10, '13900139000'],
        [12, '13700137000'],
        [14, '13600136000'],
      ],
    );
    assert.equal(rows[0]?.datas[0], 'a\nb\r\nc\rd');
  });

  it('splits a file that mixes CRLF and LF (hand edits after an Excel export)', async () => {
    const rows = await allRows(
      tempFile('mixed.csv', 'phone,data1\r\n13800138000,a\n13900139000,b\r\n13700137000,c\n'),
    );
    assert.deepEqual(
      rows.map((r) => [r.line, r.phone, r.datas]),
      [
        [2, '13800138000', ['a']],
        [3, '13900139000', ['b']],
        [4, '13700137000', ['c']],
      ],
    );
  });

  it('reads only the inspected bytes when told their number (what was appended since is not read)', async () => {
    const head = 'phone,data1\n13800000001,a\n13800000002,b\n';
    const file = tempFile('bounded.csv', `${head}13800000003,c\n`);
    const rows: string[] = [];
    for await (const chunk of readRows(file, { ...DEFAULTS, bytes: Buffer.byteLength(head) }))
      rows.push(...chunk.map((r) => r.phoneRaw));
    assert.deepEqual(rows, ['13800000001', '13800000002']);
  });

  it('yields chunks of at most 100 rows, in order, lines continuous', async () => {
    const lines = ['phone,data1'];
    for (let i = 0; i < 250; i++) lines.push(`${13800000000 + i},v${i}`);
    const sizes: number[] = [];
    const seen: number[] = [];
    for await (const chunk of readRows(tempFile('chunks.csv', lines.join('\n')), DEFAULTS)) {
      sizes.push(chunk.length);
      seen.push(...chunk.map((r) => r.line));
    }
    assert.deepEqual(sizes, [100, 100, 50]);
    assert.deepEqual(
      seen,
      Array.from({ length: 250 }, (_, i) => i + 2),
    );
  });
});

describe('readRows: values', () => {
  it('drops trailing empty values only, unless quoted, and never trims', async () => {
    const file = tempFile(
      'values.csv',
      'phone,data1,data2,data3,data4\n13800138000, a ,,c\t,\n13900139000,,,,\n13700137000,"",x,"",""\n',
    );
    assert.deepEqual(
      (await allRows(file)).map((r) => r.datas),
      [[' a ', '', 'c\t'], [], ['', 'x', '', '']],
    );
  });

  it('keeps a stray quote inside an unquoted cell as written (hand-made files)', async () => {
    const rows = await allRows(
      tempFile('stray.csv', 'phone,data1\n13800138000,5" screen\n13900139000,"a"b\n'),
    );
    assert.deepEqual(
      rows.map((r) => r.datas),
      [['5" screen'], ['"a"b']],
    );
  });

  it('flags a row whose value took in the rows after it (a quote left open, closed lines later): those rows are named, the others go', async () => {
    const text =
      '手机号,模板ID,参数1,参数2\r\n13800138000,1,"5寸屏,5\r\n13800138001,1,abc,5\r\n13800138002,1,abc,5\r\n13800138003,1,24" 显示器,5\r\n13800138004,1,def,5\r\n';
    const rows = await allRows(tempFile('swallowed.csv', text));
    assert.deepEqual(
      rows.map((r) => r.line),
      [2, 6],
    );
    assert.equal(
      rows[0]!.error,
      'the value of 参数1 runs from line 2 to line 5 and holds lines that look like rows of the list: a double quote was left open; this row and the rows it took in are not sent: fix the quote and give the file again',
    );
    assert.equal(rows[1]!.error, undefined);
    // The phone column elsewhere than first: the rows taken in have their number at its place.
    const named =
      'name,phone,templateId,data1,data2\n张三,13800000001,1,"5寸屏,x\n李四,13800000002,1,abc,5\n王五,13800000003,1,abc,5\n赵六,13800000004,1,"24" 显示器,5\n钱七,13800000005,1,def,5\n';
    const second = await allRows(tempFile('swallowed-named.csv', named));
    assert.deepEqual(
      second.map((r) => [r.line, r.error === undefined]),
      [
        [2, false],
        [6, true],
      ],
    );
    assert.match(
      second[0]!.error ?? '',
      /the value of data1 runs from line 2 to line 5 and holds lines that look like rows/,
    );
    // A value over lines without a row in it (an address) is a value.
    const address = await allRows(
      tempFile('address.csv', 'phone,data1\n13800000001,"Room 5, Building 3,\nRoad 12, 100020"\n'),
    );
    assert.equal(address[0]!.error, undefined);
  });

  it('refuses a row with an empty template value before a filled one (a blank in the message); trailing empty values are dropped', async () => {
    const rows = await allRows(
      tempFile(
        'gap-value.csv',
        '手机号,参数1,参数2,参数3\n13800138013,,5,x\n13800138014, ,5\n13800138015,a,,\n',
      ),
    );
    assert.equal(
      rows[0]!.error,
      '参数1 is empty while a later value is not: the message would go with a blank in it',
    );
    assert.match(rows[1]!.error ?? '', /^参数1 is empty while a later value is not/);
    assert.deepEqual([rows[2]!.datas, rows[2]!.error], [['a'], undefined]);
  });

  it('names a header row repeated under the first (files joined together)', async () => {
    const rows = await allRows(
      tempFile('joined.csv', '手机号,参数1\n13800138000,a\n手机号,参数1\n13800138001,b\n'),
    );
    assert.deepEqual(
      rows.map((r) => r.error),
      [undefined, 'this row repeats the header row (files joined together?)', undefined],
    );
  });

  it('treats missing cells of a short row as empty', async () => {
    const rows = await allRows(tempFile('short.csv', 'phone,data1,data2,note\n13800138000,a\n'));
    assert.deepEqual(
      rows.map((r) => [r.datas, r.extras, r.error]),
      [[['a'], [''], undefined]],
    );
  });

  it('uses the template and app columns, trimmed, and the defaults when a cell is empty', async () => {
    const file = tempFile('ids.csv', 'phone,模板ID,应用ID\n13800138000, 42 ,appA\n13900139000,,\n');
    const rows = await allRows(file);
    assert.deepEqual(
      rows.map((r) => [r.templateId, r.appId]),
      [
        ['42', 'appA'],
        ['tpl-default', 'app-default'],
      ],
    );
  });

  it('unguards every cell, so a formula-guarded export sends the original text', async () => {
    const file = tempFile(
      'guarded.csv',
      "phone,templateId,appId,data1,data2,note\n'+8613800138000,'-1,'=app,'=SUM(A1),''@x,'-note\n",
    );
    const [row] = await allRows(file);
    assert.deepEqual(
      {
        phoneRaw: row?.phoneRaw,
        phone: row?.phone,
        templateId: row?.templateId,
        appId: row?.appId,
        datas: row?.datas,
        extras: row?.extras,
      },
      {
        phoneRaw: '+8613800138000',
        phone: '13800138000',
        templateId: '-1',
        appId: '=app',
        datas: ['=SUM(A1)', "'@x"],
        extras: ['-note'],
      },
    );
  });

  it('names extra columns by their header, made unique and never empty', async () => {
    let names: string[] = [];
    let map: ColumnMap | undefined;
    const file = tempFile('extras.csv', 'line,phone,line,,reason\n7,13800138000,8,z,why\n');
    const chunks = readRows(file, { ...DEFAULTS, onHeader: (m, n) => ((map = m), (names = n)) });
    const rows = [];
    for await (const chunk of chunks) rows.push(...chunk);
    assert.deepEqual(names, ['line', 'line (2)', 'column 4', 'reason']);
    assert.deepEqual(map?.extras, [0, 2, 3, 4]);
    assert.deepEqual(rows[0]?.extras, ['7', '8', 'z', 'why']);
  });
});

describe('readRows: row errors never stop the other rows', () => {
  it('marks bad rows and keeps every good one', async () => {
    const text = [
      'phone,templateId,data1',
      '13800138000,1,ok',
      ',1,no phone',
      '1.38E+10,1,scientific',
      '13900139000,,no template',
      '13700137000,1,too many,cells',
      '13600136000,1,padded,,,',
      '+14155550123,1,international',
      '13500135000,1,last',
    ].join('\r\n');
    const rows = await allRows(tempFile('bad.csv', text), { defaultTemplateId: undefined });
    assert.deepEqual(
      rows.map((r) => [r.line, r.phone ?? null, r.error ?? null]),
      [
        [2, '13800138000', null],
        [3, null, 'phone number is empty'],
        [4, null, rows[2]?.error],
        [5, '13900139000', 'template id is empty and no default templateId is set'],
        [6, '13700137000', 'row has 4 cells but the header has 3 (an unquoted comma in a value?)'],
        [7, '13600136000', null],
        [8, null, 'international numbers are not enabled (allowInternational)'],
        [9, '13500135000', null],
      ],
    );
    assert.match(rows[2]?.error ?? '', /scientific notation/);
  });

  it('refuses a template value Excel turned into scientific notation (its digits are lost), naming the column; short exponents and other text are values', async () => {
    const file = tempFile(
      'scientific-values.csv',
      'phone,参数1,参数2\n13800000001,1.23457E+12,ok\n13800000002,123456789012,ok\n13800000003,3E+5,1e+11\n13800000004,E+12 units,2.5e+10\n13800000005,1.38001E+10,ok\n13800000006,1.2E+05,ok\n13800000007,1.2E+04,2.5e+10\n',
    );
    const rows = await allRows(file);
    assert.deepEqual(rows.map((r) => r.datas).slice(0, 4), [
      ['1.23457E+12', 'ok'],
      ['123456789012', 'ok'],
      ['3E+5', '1e+11'],
      ['E+12 units', '2.5e+10'],
    ]);
    // Excel's own form (capital E, two-digit exponent) from E+05: a number in a narrow column.
    assert.match(rows[4]!.error ?? '', /^参数1 "1\.38001E\+10": a spreadsheet turned/);
    assert.match(rows[5]!.error ?? '', /^参数1 "1\.2E\+05"/);
    assert.equal(rows[6]!.error, undefined);
    assert.equal(
      rows[0]!.error,
      '参数1 "1.23457E+12": a spreadsheet turned a long number into scientific notation and its digits are lost; format the column as text and export again',
    );
    assert.equal(rows[1]!.error, undefined);
    assert.match(rows[2]!.error ?? '', /^参数2 "1e\+11": a spreadsheet turned a long number/);
    assert.equal(rows[3]!.error, undefined);
  });

  it('refuses a template value holding a control character (NUL, escape, DEL, C1), naming it; tabs and line breaks are text', async () => {
    const file = tempFile(
      'control.csv',
      'phone,data1,data2\n13800000001,a\u0000b,ok\n13800000002,ok,\u001b[31m\n13800000003,x\u007f,ok\n13800000004,\u0085,ok\n13800000005,"tab\tand\r\nbreak",ok\n',
    );
    const rows = await allRows(file);
    assert.equal(
      rows[0]!.error,
      'data1 holds a control character (U+0000) that a message cannot carry: remove it',
    );
    assert.match(rows[1]!.error ?? '', /^data2 holds a control character \(U\+001B\)/);
    assert.match(rows[2]!.error ?? '', /\(U\+007F\)/);
    assert.match(rows[3]!.error ?? '', /\(U\+0085\)/);
    assert.equal(rows[4]!.error, undefined);
    assert.deepEqual(rows[4]!.datas, ['tab\tand\r\nbreak', 'ok']);
  });

  it('refuses a template value longer than maxValueChars (default 500), counted in characters', async () => {
    const long = '字'.repeat(501);
    const emoji = '😀'.repeat(500); // 1,000 UTF-16 units, 500 characters
    const rows = await allRows(
      tempFile(
        'long.csv',
        `phone,data1\n13800000001,${long}\n13800000002,${emoji}\n13800000003,${'a'.repeat(100_000)}\n`,
      ),
    );
    assert.equal(
      rows[0]!.error,
      'data1 is 501 characters long, more than the 500 allowed (SMSDROP_MAX_VALUE_CHARS): a cell that took in more than it should?',
    );
    assert.equal(rows[1]!.error, undefined);
    assert.match(rows[2]!.error ?? '', /is 100000 characters long/);
    const lowered = await allRows(
      tempFile('long2.csv', 'phone,data1\n13800000001,abcdef\n13800000002,abcde\n'),
      { maxValueChars: 5 },
    );
    assert.deepEqual(
      lowered.map((r) => r.error === undefined),
      [false, true],
    );
  });

  it('joins several problems of one row', async () => {
    const rows = await allRows(tempFile('two-problems.csv', 'phone,template,app\nabc,,\n'), {
      defaultTemplateId: undefined,
      defaultAppId: undefined,
    });
    assert.equal(
      rows[0]?.error,
      'phone number contains characters other than digits; template id is empty and no default templateId is set; app id is empty and no default appId is set',
    );
  });

  it('accepts international numbers when enabled', async () => {
    const rows = await allRows(tempFile('intl.csv', 'phone\n+1 415 555 0123\n'), {
      allowInternational: true,
    });
    assert.equal(rows[0]?.phone, '0014155550123');
  });
});

describe('readRows: refused files', () => {
  it('refuses a missing file', async () => {
    assert.match(
      (await refusal(path.join(TEMP_DIR, 'missing.csv'))).message,
      /cannot read the file: ENOENT/,
    );
  });
  it('refuses a directory', async () => {
    assert.match((await refusal(TEMP_DIR)).message, /cannot read the file/);
  });
  it('refuses an empty file and a file of blank lines', async () => {
    assert.match(
      (await refusal(tempFile('empty.csv', ''))).message,
      /empty: a header row is required/,
    );
    assert.match(
      (await refusal(tempFile('blank.csv', '\r\n\r\n,,,\r\n'))).message,
      /empty: a header row is required/,
    );
  });
  it('refuses a file with a header and no rows (an export cut short): nothing to send is news', async () => {
    assert.match(
      (await refusal(tempFile('header-only.csv', '手机号,参数1\r\n'))).message,
      /header row but no rows under it/,
    );
    assert.match(
      (await refusal(tempFile('header-blank.csv', '手机号,参数1\n\n,,\n'))).message,
      /header row but no rows under it/,
    );
  });
  it("skips title rows above the header (up to 5), as some systems export; line numbers stay the file's", async () => {
    const file = tempFile(
      'titled.csv',
      '客户短信名单,,\n导出时间 2026-11-26,,\nphone,data1,data2\n13800000001,a,b\n13800000002,c,d\n',
    );
    const rows = await allRows(file);
    assert.deepEqual(
      rows.map((r) => [r.line, r.phone, r.datas, r.error]),
      [
        [4, '13800000001', ['a', 'b'], undefined],
        [5, '13800000002', ['c', 'd'], undefined],
      ],
    );
    const five = tempFile('five-titles.csv', `${'title\n'.repeat(5)}phone\n13800000001\n`);
    assert.deepEqual(
      (await allRows(five)).map((r) => r.line),
      [7],
    );
  });

  it('refuses a file whose first 6 rows name no phone column, for its first row, saying title rows are skipped only so far', async () => {
    const err = await refusal(
      tempFile('late-header.csv', `${'title\n'.repeat(6)}phone\n13800000001\n`),
    );
    assert.match(
      err.message,
      /late-header\.csv, line 1: no phone column: the first row must be a header .*none of the first 6 rows names one \(title rows above the header are skipped, no more than 5\)/,
    );
    assert.equal(err.code, 'E_NO_PHONE_COLUMN');
    const data = await refusal(tempFile('no-header.csv', '13800000001,a\n13800000002,b\n'));
    assert.match(
      data.message,
      /line 1: no phone column.*the first row looks like data: add a header row/,
    );
  });

  it('a title row does not hide another problem of the header below it', async () => {
    const err = await refusal(
      tempFile('two-phones.csv', 'title\nphone,mobile\n13800000001,13800000002\n'),
    );
    assert.match(err.message, /line 2: two phone columns/);
  });

  it('refuses a header without a phone column, naming the header line', async () => {
    const err = await refusal(tempFile('nophone.csv', '\nname,data1\nx,y\n'));
    assert.match(err.message, /nophone\.csv, line 2: no phone column/);
    assert.equal(err.line, 2);
  });
  it('refuses two phone columns and a gap in the numbering', async () => {
    assert.match(
      (await refusal(tempFile('twophones.csv', 'phone,mobile\n1,2\n'))).message,
      /two phone columns/,
    );
    assert.match(
      (await refusal(tempFile('gap.csv', 'phone,data1,data3\n1,2,3\n'))).message,
      /value 2 is missing/,
    );
  });
  it('refuses a file without template column when there is no default templateId', async () => {
    const file = tempFile('notemplate.csv', 'phone,data1\n13800138000,x\n');
    assert.match(
      (await refusal(file, { defaultTemplateId: undefined })).message,
      /no template column .* no default templateId/,
    );
    assert.equal((await allRows(file)).length, 1, 'accepted with a default');
  });
  it('refuses a file without app column when there is no default appId', async () => {
    const file = tempFile('noapp.csv', 'phone,data1\n13800138000,x\n');
    assert.match(
      (await refusal(file, { defaultAppId: '' })).message,
      /no app column .* no default appId/,
    );
  });
  it('refuses a quoted cell that is never closed, with the line where its record starts', async () => {
    const err = await refusal(
      tempFile('unclosed.csv', 'phone,data1\n13800138000,ok\n13900139000,"never closed\nmore\n'),
    );
    assert.match(err.message, /unclosed\.csv, line 3: a double quote opened here is never closed/);
    assert.equal(err.line, 3);
  });
  it('refuses a quote opened mid-file across many reads, after the rows before it, naming its line', async () => {
    const lines = ['phone,data1'];
    for (let i = 0; i < 10_000; i++)
      lines.push(
        i === 6000
          ? `${13800000000 + i},"opened here`
          : `${13800000000 + i},value ${i} of the file`,
      );
    const file = tempFile('opened-mid-file.csv', `${lines.join('\r\n')}\r\n`); // ~330 KB: several reads
    let rowsBefore = 0;
    try {
      for await (const chunk of readRows(file, DEFAULTS)) rowsBefore += chunk.length;
      assert.fail('the file was accepted');
    } catch (err) {
      assert.ok(err instanceof FileRefusedError, String(err));
      assert.match(err.message, /never closed/);
      assert.equal(err.line, 6002, 'the line where the record with the open quote starts');
    }
    assert.equal(rowsBefore, 6000, 'every row before it was read, in chunks');
  });
  it('names the line of a quote left open with short rows after it (csv-parse counted ahead), LF and CRLF, UTF-8 and GB18030', async () => {
    const lines = ['手机号,模板ID,参数1,参数2'];
    for (let i = 0; i < 30; i++) lines.push(`${13800138100 + i},1,x${i},5`);
    lines.push('13800138999,1,"open,5'); // line 32
    for (let i = 0; i < 20; i++) lines.push(`${13900138100 + i},1,y${i},5`);
    for (const eol of ['\n', '\r\n']) {
      assert.equal(
        (await refusal(tempFile(`open-at-32-${eol.length}.csv`, lines.join(eol) + eol))).line,
        32,
      );
      const gb = tempFile(
        `open-at-32-gb-${eol.length}.csv`,
        iconv.encode(lines.join(eol) + eol, 'gb18030'),
      );
      assert.equal((await refusal(gb, { encoding: 'gb18030' })).line, 32);
    }
  });
  it('refuses a record longer than 1 MB (a file without line breaks) instead of holding it in memory', async () => {
    const err = await refusal(
      tempFile('one-line.csv', `phone,data1\n13800138000,${'a'.repeat(1_100_000)}\n`),
    );
    assert.match(
      err.message,
      /one-line\.csv, line 2: a record that starts here or after is longer than 1 MB/,
    );
  });
  it('refuses a workbook and UTF-16 text without a byte order mark with what to do instead', async () => {
    const book = await refusal(tempFile('book.csv', Buffer.from('PK\x03\x04rest-of-zip')));
    assert.match(book.message, /this is an Excel workbook: save it as CSV UTF-8/);
    assert.equal(book.code, 'E_FILE_EXCEL');
    const old = await refusal(tempFile('old.csv', Buffer.from([0xd0, 0xcf, 0x11, 0xe0, 0xa1])));
    assert.match(old.message, /Excel workbook: save it as CSV UTF-8.*\.xls/);
    assert.equal(old.code, 'E_FILE_EXCEL');
    const utf16 = Buffer.from('phone\r\n', 'utf16le');
    const unmarked = await refusal(tempFile('utf16.csv', utf16));
    assert.match(unmarked.message, /UTF-16 text without a byte order mark/);
    assert.equal(unmarked.code, 'E_FILE_UTF16');
  });
});

describe('the bundled sample (samples/contacts.csv)', () => {
  it('has 20 rows for template 1 with 2 values, one bad row and one duplicate number', async () => {
    const rows = await allRows(path.resolve(import.meta.dirname, '../../samples/contacts.csv'), {
      defaultTemplateId: undefined,
    });
    assert.equal(rows.length, 20);
    const bad = rows.filter((r) => r.error !== undefined);
    assert.deepEqual(
      bad.map((r) => r.phoneRaw),
      ['1.38E+10'],
    );
    const good = rows.filter((r) => r.error === undefined);
    assert.ok(good.every((r) => r.templateId === '1' && r.datas.length === 2));
    const phones = good.map((r) => r.phone);
    assert.equal(new Set(phones).size, phones.length - 1, 'exactly one number appears twice');
    assert.ok(
      rows.some((r) => r.phoneRaw !== r.phone && r.error === undefined),
      'some numbers are messy',
    );
  });
});
