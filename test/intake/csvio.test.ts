// The CSV the program writes: formula guard (and its exact inverse), RFC 4180 quoting, the
// writer, and the round trip: what csvLine writes, readRows reads back unchanged.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { describe, it } from 'node:test';
import { createCsvWriter, csvLine, guardCell, unguardCell } from '../../src/csvio/index.js';
import { allRows, tempFile, TEMP_DIR } from './helpers.js';
import path from 'node:path';

/** Deterministic pseudo-random strings rich in the characters that matter here. */
function* awkwardStrings(count: number): Generator<string> {
  const alphabet = [
    "'",
    "'",
    '=',
    '+',
    '-',
    '@',
    '\t',
    '\r',
    '\n',
    ',',
    '"',
    ' ',
    'a',
    '1',
    '张',
    '\u3000',
  ];
  let seed = 12345; // xorshift32: exact in 32-bit integer arithmetic
  const next = () => {
    seed ^= seed << 13;
    seed ^= seed >>> 17;
    seed ^= seed << 5;
    return seed >>> 0;
  };
  for (let i = 0; i < count; i++) {
    let s = '';
    for (let n = next() % 7; n > 0; n--) s += alphabet[next() % alphabet.length];
    yield s;
  }
}

describe('guardCell / unguardCell', () => {
  const table: Array<[string, string]> = [
    ['=1+2', "'=1+2"],
    ['+8613800138000', "'+8613800138000"],
    ['-5', "'-5"],
    ['@SUM(A1)', "'@SUM(A1)"],
    ['\tx', "'\tx"],
    ['\rx', "'\rx"],
    ["'=x", "''=x"],
    ["''-", "'''-"],
    ['13800138000', '13800138000'],
    ["'hello", "'hello"],
    ["'", "'"],
    ['', ''],
    ['a=b', 'a=b'],
    [' =x', ' =x'],
  ];
  for (const [plain, guarded] of table) {
    it(`guards ${JSON.stringify(plain)} as ${JSON.stringify(guarded)} and back`, () => {
      assert.equal(guardCell(plain), guarded);
      assert.equal(unguardCell(guarded), plain);
    });
  }

  it('unguard(guard(s)) === s for many awkward strings', () => {
    let guarded = 0;
    for (const s of awkwardStrings(20000)) {
      const g = guardCell(s);
      if (g !== s) guarded++;
      assert.equal(unguardCell(g), s, `round trip of ${JSON.stringify(s)}`);
      assert.doesNotMatch(
        g,
        /^[=+\-@\t\r]/,
        `guarded text ${JSON.stringify(g)} must not start a formula`,
      );
    }
    assert.ok(guarded > 1000, 'the generator exercises the guard');
  });
});

describe('csvLine', () => {
  it('quotes only cells that need it, doubles quotes, ends in CRLF', () => {
    assert.equal(
      csvLine(['a', 'b c', 'x,y', 'say "hi"', 'l1\nl2', 'r\rx', ' lead', 'trail ', '']),
      'a,b c,"x,y","say ""hi""","l1\nl2","r\rx"," lead","trail ",\r\n',
    );
  });
  it('guards formulas before quoting', () => {
    assert.equal(csvLine(['=1+2', '-a,b', '@x']), `'=1+2,"'-a,b",'@x\r\n`);
    assert.equal(csvLine(['\t']), `"'\t"\r\n`, 'a tab is guarded, and quoted as trailing space');
  });
  it('writes an empty record as an empty line', () => {
    assert.equal(csvLine([]), '\r\n');
  });
});

describe('createCsvWriter', () => {
  it('writes a UTF-8 BOM, the header and the rows; close twice is fine', async () => {
    const file = path.join(TEMP_DIR, 'out.csv');
    const writer = createCsvWriter(file, ['phone', 'note'], { bom: true });
    writer.write(['13800138000', '张三, 销售']);
    writer.write(['+1', '=x']);
    const closing = writer.close();
    assert.equal(writer.close(), closing);
    await closing;
    assert.equal(
      fs.readFileSync(file, 'utf8'),
      '\uFEFFphone,note\r\n13800138000,"张三, 销售"\r\n\'+1,\'=x\r\n',
    );
    assert.throws(() => writer.write(['late']), /closed/);
  });

  it('writes without BOM when asked, and large files completely', async () => {
    const file = path.join(TEMP_DIR, 'big.csv');
    const writer = createCsvWriter(file, ['n'], { bom: false });
    for (let i = 0; i < 50000; i++) writer.write([String(i)]);
    await writer.close();
    const lines = fs.readFileSync(file, 'utf8').split('\r\n');
    assert.equal(lines[0], 'n');
    assert.equal(lines[50000], '49999');
    assert.equal(lines.length, 50002);
  });
});

describe('round trip: a CSV the program writes is read back unchanged', () => {
  it('csvLine -> file -> readRows gives the same phone, ids, values and extras', async () => {
    const values = [...awkwardStrings(3000)];
    const header = ['phone', 'templateId', 'appId', 'data1', 'data2', 'note'];
    const written: string[][] = [];
    for (let i = 0; i < 1000; i++) {
      const phone =
        i % 3 === 0 ? `+86${13800000000 + i}` : i % 3 === 1 ? `-${i}` : String(13800000000 + i);
      written.push([
        phone,
        `=t${i}`,
        `@a${i}`,
        values[i * 3] ?? '',
        `v${values[i * 3 + 1] ?? ''}`,
        values[i * 3 + 2] ?? '',
      ]);
    }
    const file = tempFile(
      'roundtrip.csv',
      '\uFEFF' + csvLine(header) + written.map((r) => csvLine(r)).join(''),
    );
    const rows = await allRows(file);
    assert.equal(rows.length, written.length);
    rows.forEach((row, i) => {
      const [phone, templateId, appId, data1, data2, note] = written[i] as string[];
      assert.equal(row.phoneRaw, phone);
      assert.equal(row.templateId, templateId);
      assert.equal(row.appId, appId);
      assert.deepEqual(row.datas, [data1, data2]);
      assert.deepEqual(row.extras, [note]);
    });
    assert.equal(rows[0]?.phone, '13800000000');
  });

  it('digits Excel would change (a leading zero, 12 digits or more) are written as ="…" for files dropped back, and read back as they were', async () => {
    const file = path.join(TEMP_DIR, 'digits.csv');
    const writer = createCsvWriter(file, ['手机号', '参数1', '参数2'], { digitsAsText: true });
    const cells = [
      ['13900000001', '048213', '440301199001011234'],
      ['0014155550123', '0', '123456789012'],
      ['13900000002', '="0123"', "'=x"], // text that looks like the guard's form is guarded as a formula, so it too comes back as it was
    ];
    for (const c of cells) writer.write(c);
    await writer.close();
    const text = fs.readFileSync(file, 'utf8');
    assert.ok(text.includes('\r\n13900000001,"=""048213""","=""440301199001011234"""\r\n'), text);
    assert.ok(text.includes('\r\n"=""0014155550123""",0,"=""123456789012"""\r\n'), text);
    const rows = await allRows(file, { allowInternational: true });
    assert.deepEqual(
      rows.map((r) => [r.phoneRaw, ...r.datas]),
      cells,
    );
    assert.equal(rows[1]!.phone, '0014155550123');
  });

  it('what createCsvWriter writes is read back unchanged', async () => {
    const file = path.join(TEMP_DIR, 'written.csv');
    const writer = createCsvWriter(file, ['手机号', '参数1', '备注']);
    const values = [...awkwardStrings(200)];
    for (let i = 0; i < 100; i++)
      writer.write([String(13900000000 + i), `x${values[i * 2]}`, values[i * 2 + 1] ?? '']);
    await writer.close();
    const rows = await allRows(file);
    assert.deepEqual(
      rows.map((r) => [r.phone, r.datas[0], r.extras[0]]),
      Array.from({ length: 100 }, (_, i) => [
        String(13900000000 + i),
        `x${values[i * 2]}`,
        values[i * 2 + 1],
      ]),
    );
  });
});
