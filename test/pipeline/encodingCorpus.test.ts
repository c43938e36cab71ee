// Issue 32, item 1, end to end: files through `smsdrop send` against the simulator arrive with the
// text they hold. Before, a UTF-8 list of Armenian, IPA and NKo names was read as GB18030 and sent
// as Chinese (Անի as 员斩斋), reported accepted, exit 0; a literal U+FFFD made its row invalid.
import assert from 'node:assert/strict';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { openReader } from '../../src/journals/index.js';
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

/** A list of template 2 (one value): each value to its own number from 13800000000 + offset. */
function list(values: readonly string[], offset: number): string {
  const rows = values.map((v, i) => `${13800000000 + offset + i},2,"${v}"`);
  return `phone,templateId,data1\r\n${rows.join('\r\n')}\r\n`;
}

function expected(values: readonly string[], offset: number): Map<string, number> {
  return new Map(
    values.map((v, i) => [messageKey(CREDS.appId, '2', [v], String(13800000000 + offset + i)), 1]),
  );
}

describe('encodings end to end', () => {
  let sim: RunningSimulator;
  before(async () => (sim = await startSim()));
  after(() => sim.close());

  async function send(
    name: string,
    content: string | Buffer,
    extra: Record<string, string> = {},
  ): Promise<{ status: number | null; json: Record<string, unknown>; sent: Map<string, number> }> {
    const dir = tempDir();
    const before = sim.records.length;
    const result = await runCli(
      ['send', writeCsv(dir, name, content), '--json'],
      envFor(sim, path.join(dir, 'data'), extra),
    );
    assert.ok(result.json, result.stderr);
    const sent = deliveries({ ...sim, records: sim.records.slice(before) });
    return { status: result.status, json: result.json, sent };
  }

  it('UTF-8 names in Armenian, IPA and NKo (two-byte letters only), a ʤ and a literal U+FFFD arrive as written', async () => {
    const values = [
      'Անահիտ Պետրոսյան',
      'Արամ Խաչատրյան',
      'ʤ',
      'ɲaˈma',
      'ߒߞߏ',
      '37\uFFFD36\'37.8"N',
    ];
    const csv = list(values, 0).replace('"37\uFFFD36\'37.8"N"', '"37\uFFFD36\'37.8""N"');
    const { status, sent } = await send('names.csv', csv);
    assert.equal(status, 0);
    assert.deepEqual(sent, expected(values, 0));
  });

  it('UTF-8 in Georgian, Thai, Devanagari and emoji arrives as written', async () => {
    const values = ['გიორგი ბერიძე', 'สมชาย ใจดี', 'राहुल शर्मा', '😀 生日快乐 🎂'];
    const { status, sent } = await send('scripts.csv', list(values, 100));
    assert.equal(status, 0);
    assert.deepEqual(sent, expected(values, 100));
  });

  it('GB18030 names whose bytes are valid UTF-8 too arrive as Chinese', async () => {
    const values = ['史女士', '郑爽', '肖战', '袁泉', '薛之'];
    const { status, sent } = await send('gb.csv', iconv.encode(list(values, 200), 'gb18030'));
    assert.equal(status, 0);
    assert.deepEqual(sent, expected(values, 200));
  });

  it('a file both of whose readings are plausible is refused with both shown, nothing sent; its name or SMSDROP_ENCODING settles it', async () => {
    const bytes = Buffer.from(list(['Անի'], 300));
    const refused = await send('ani.csv', bytes);
    assert.equal(refused.status, 2);
    assert.equal(refused.json.code, 'E_FILE_ENCODING_AMBIGUOUS');
    assert.match(
      String(refused.json.reason),
      /line 2 holds "Անի" in UTF-8 or "员斩斋" in GB18030, .*name it NAME\.utf8\.csv or NAME\.gb18030\.csv, or set SMSDROP_ENCODING=utf8 or gb18030/,
    );
    assert.equal(refused.sent.size, 0);

    const named = await send('ani.utf8.csv', bytes);
    assert.equal(named.status, 0);
    assert.deepEqual(named.sent, expected(['Անի'], 300));
    const set = await send('ani.csv', bytes, { SMSDROP_ENCODING: 'gb18030' });
    assert.equal(set.status, 0);
    assert.deepEqual(set.sent, expected(['员斩斋'], 300));
  });

  it('refused, then settled in the same data directory, the file is read anew and recorded in its new encoding', async () => {
    const dir = tempDir();
    const data = path.join(dir, 'data');
    const file = writeCsv(dir, 'ani.csv', list(['Անի'], 500));
    const before = sim.records.length;
    assert.equal((await runCli(['send', file, '--json'], envFor(sim, data))).status, 2);
    const settled = await runCli(
      ['send', file, '--json'],
      envFor(sim, data, { SMSDROP_ENCODING: 'gb18030' }),
    );
    assert.equal(settled.status, 0, settled.stderr);
    assert.deepEqual(
      deliveries({ ...sim, records: sim.records.slice(before) }),
      expected(['员斩斋'], 500),
    );
    const journal = (await openReader({ dataDir: data }))!;
    try {
      const records = [];
      for (const { id } of await journal.listFiles()) records.push((await journal.file(id))!);
      assert.deepEqual(
        records.map(({ status, encoding }) => ({ status, encoding })),
        [{ status: 'done', encoding: 'gb18030' }],
      );
    } finally {
      journal.close();
    }
  });

  it('a bad SMSDROP_ENCODING stops the command with its code', async () => {
    const dir = tempDir();
    const result = await runCli(
      ['send', writeCsv(dir, 'x.csv', list(['a'], 400)), '--json'],
      envFor(sim, path.join(dir, 'data'), { SMSDROP_ENCODING: 'latin1' }),
    );
    assert.equal(result.status, 2);
    assert.match(result.stderr, /E_CONFIG_ENCODING/);
    assert.match(result.stderr, /expected auto, utf8 or gb18030/);
  });

  describe('tab-separated lists and UTF-16 (Excel "Text (Tab delimited)" and "Unicode Text")', () => {
    const values = ['张三 先生', 'Անահիտ', '😀 生日快乐', 'a "quoted", word'];
    /** Rows of template 2 (one value), cells separated by `sep`; values with a quote are quoted. */
    function rows(sep: string, offset: number): string {
      const cell = (v: string) => (v.includes('"') ? `"${v.replace(/"/g, '""')}"` : v);
      const lines = values.map((v, i) => [13800000000 + offset + i, 2, cell(v)].join(sep));
      return `phone${sep}templateId${sep}data1\r\n${lines.join('\r\n')}\r\n`;
    }
    const utf16le = (text: string) => Buffer.from(`\uFEFF${text}`, 'utf16le');
    const utf16be = (text: string) => utf16le(text).swap16();

    const cases: Array<[string, string, (offset: number) => Buffer]> = [
      ['UTF-8 .tsv', 'list.tsv', (o) => Buffer.from(rows('\t', o))],
      [
        'Unicode Text (UTF-16LE with BOM, tabs) as .txt',
        'Unicode Text.txt',
        (o) => utf16le(rows('\t', o)),
      ],
      ['a .csv whose header is tab-separated', 'tabs.csv', (o) => Buffer.from(rows('\t', o))],
      ['UTF-16BE with BOM, commas, as .csv', 'be.csv', (o) => utf16be(rows(',', o))],
      ['UTF-16LE with BOM and tabs, named .csv', 'le.csv', (o) => utf16le(rows('\t', o))],
      [
        'GB18030 .txt (Chinese Excel "Text (Tab delimited)")',
        'gb.txt',
        (o) => iconv.encode(rows('\t', o).replace('Անահիտ', '李四'), 'gb18030'),
      ],
    ];
    cases.forEach(([what, name, bytes], k) => {
      it(`${what}: every row arrives as written`, async () => {
        const offset = 1000 + 10 * k;
        const { status, json, sent } = await send(name, bytes(offset));
        assert.equal(status, 0, JSON.stringify(json));
        const sentValues =
          name === 'gb.txt' ? values.map((v) => v.replace('Անահիտ', '李四')) : values;
        assert.deepEqual(sent, expected(sentValues, offset));
      });
    });

    it('a UTF-16 file whose characters hold the bytes of a quote or a line feed (丢 is 22 4E, 上 0A 4E) reads as written', async () => {
      const text = ['上海', '丢失', '上上上上上'];
      const lines = text.map((v, i) => `${13800001100 + i}\t2\t${v}`);
      const bytes = utf16le(`phone\ttemplateId\tdata1\r\n${lines.join('\r\n')}\r\n`);
      const { status, sent } = await send('shanghai.txt', bytes);
      assert.equal(status, 0);
      assert.deepEqual(sent, expected(text, 1100));
    });

    it('UTF-16 text without a byte order mark is refused with what to do', async () => {
      const refused = await send('nomark.txt', Buffer.from(rows('\t', 1200), 'utf16le'));
      assert.equal(refused.status, 2);
      assert.equal(refused.json.code, 'E_FILE_UTF16');
      assert.match(String(refused.json.reason), /without a byte order mark.*CSV UTF-8/);
      assert.equal(refused.sent.size, 0);
    });
  });
});
