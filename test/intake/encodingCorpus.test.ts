// Issue 32, item 1: a file's encoding is never guessed silently. A file of valid UTF-8 is UTF-8
// unless its GB18030 reading is clearly Chinese and its UTF-8 reading is not plausible; when both
// stay plausible it is refused (E_FILE_ENCODING_AMBIGUOUS). Before, Armenian Անի was read as
// 员斩斋, csv-spectrum's ʤ as 胜, and a literal U+FFFD made its row "bytes that are not text".
// The corpus: csv-spectrum's files, lists in scripts whose letters are GB2312 characters by their
// bytes, and GB18030 lists of Chinese names, those whose bytes are valid UTF-8 found by search.
import assert from 'node:assert/strict';
import { isUtf8 } from 'node:buffer';
import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { describe, it } from 'node:test';
import iconv from 'iconv-lite';
import { inspectFile } from '../../src/intake/index.js';
import { validUtf8Judge } from '../../src/intake/readings.js';
import { allRows, DEFAULTS, tempFile } from './helpers.js';

const SPECTRUM = path.join(
  path.dirname(createRequire(import.meta.url).resolve('csv-spectrum/package.json')),
  'csvs',
);

/** What the bytes say when read in the encoding inspectFile chose. */
async function readAs(file: string): Promise<{ text: string; encoding: string; refused: boolean }> {
  const inspection = await inspectFile(file);
  const bytes = fs.readFileSync(file);
  return {
    text: new TextDecoder(inspection.encoding).decode(bytes),
    encoding: inspection.encoding,
    refused: inspection.ambiguous !== undefined || inspection.mixed !== undefined,
  };
}

/** Lists as people keep them, in scripts many of whose letters read as GB2312 characters. */
const UTF8_LISTS: Record<string, string[]> = {
  Armenian: ['Անահիտ Պետրոսյան', 'Արամ Խաչատրյան', 'Բարև ձեզ, ձեր պատվերը պատրաստ է', 'Անի'],
  Georgian: ['გიორგი ბერიძე', 'ნინო კაპანაძე', 'თქვენი შეკვეთა მზადაა'],
  Thai: ['สมชาย ใจดี', 'สวัสดีครับ คำสั่งซื้อของคุณพร้อมแล้ว'],
  Devanagari: ['राहुल शर्मा', 'आपका ऑर्डर तैयार है'],
  IPA: ['/ˈfəʊnətɪk/', '[ʃəˈkɑːɡoʊ]', 'ʤ', 'ɲaˈma'],
  NKo: ['ߒߞߏ', 'ߡߊ߲߬ߘߋ߲߬ߞߊ߲', 'ߛߓߍߘߋ߲'],
  emoji: ['😀 生日快乐 🎂', '👍🏽', '❤️ café'],
};

function listFile(name: string, values: readonly string[]): string {
  const rows = values.map((v, i) => `${13800000000 + i},"${v}"`);
  return tempFile(name, `phone,data1\n${rows.join('\n')}\n`);
}

/** Two-character names: 100 common surnames, each with every GB2312 level-1 character. */
function twoCharacterNames(): string[] {
  const surnames =
    '王李张刘陈杨黄赵吴周徐孙马朱胡郭何高林罗郑梁谢宋唐许韩冯邓曹彭曾肖田董袁潘于蒋蔡余杜叶程苏魏吕丁任沈姚卢姜崔钟谭陆汪范金石廖贾夏韦付方白邹孟熊秦邱江尹薛闫段雷侯龙史陶黎贺顾毛郝龚邵万钱严覃武戴莫孔向汤';
  const given: string[] = [];
  for (let lead = 0xb0; lead <= 0xd7; lead++)
    for (let trail = 0xa1; trail <= (lead === 0xd7 ? 0xf9 : 0xfe); trail++)
      given.push(iconv.decode(Buffer.from([lead, trail]), 'gb18030'));
  return [...surnames].flatMap((s) => given.map((g) => s + g));
}

function verdictOf(bytes: Buffer): string {
  const judge = validUtf8Judge();
  judge.push(bytes);
  const verdict = judge.end();
  return 'encoding' in verdict ? verdict.encoding : 'ambiguous';
}

describe('encoding corpus', () => {
  it("reads every csv-spectrum file as the UTF-8 it is (utf8.csv's ʤ, location_coordinates.csv's U+FFFD)", async () => {
    const names = fs.readdirSync(SPECTRUM).filter((f) => f.endsWith('.csv'));
    assert.ok(names.length >= 12, names.join());
    for (const name of names) {
      const file = path.join(SPECTRUM, name);
      const read = await readAs(file);
      assert.equal(read.refused, false, name);
      assert.equal(read.text, fs.readFileSync(file, 'utf8'), name);
      assert.equal((await inspectFile(file)).exact, true, name);
    }
    assert.match((await readAs(path.join(SPECTRUM, 'utf8.csv'))).text, /4,5,ʤ/);
  });

  it('reads lists in Armenian, Georgian, Thai, Devanagari, IPA, NKo and emoji as UTF-8', async () => {
    for (const [script, values] of Object.entries(UTF8_LISTS)) {
      const read = await readAs(listFile(`${script}.csv`, values));
      assert.deepEqual([read.encoding, read.refused], ['utf-8', false], script);
    }
  });

  it('never reads a value of those lists, alone in a file, as GB18030: UTF-8, or refused when both readings are plausible', async () => {
    const refused: string[] = [];
    for (const [script, values] of Object.entries(UTF8_LISTS)) {
      for (const word of values.flatMap((v) => v.split(/[ ,]+/))) {
        if (/^[\x20-\x7e]*$/.test(word)) continue;
        const inspection = await inspectFile(
          tempFile(`${script}-word.csv`, `phone,data1\n1,${word}\n`),
        );
        assert.equal(inspection.encoding, 'utf-8', `${script}: ${word}`);
        if (inspection.ambiguous) refused.push(word);
      }
    }
    // Անի reads as 员斩斋, Անահիտ as 员斩铡瞻斋湛: plausible Chinese and plausible Armenian. In a list,
    // one of the other names (Պետրոսյան) is no GB2312 text, and it is UTF-8.
    assert.deepEqual(refused, ['Անահիտ', 'ձեզ', 'Անի']);
  });

  it('refuses Անի alone, showing both readings of its value', async () => {
    const inspection = await inspectFile(tempFile('ani.csv', 'phone,data1\n13800138000,Անի\n'));
    assert.deepEqual(inspection.ambiguous, { line: 2, utf8: 'Անի', gb18030: '员斩斋' });
  });

  it('reads short GB18030 lists of Chinese names as GB18030, those whose bytes are valid UTF-8 too', async () => {
    const plain = iconv.encode('phone,data1\n13800138000,张三\n13800138001,李四\n', 'gb18030');
    assert.equal((await readAs(tempFile('gb-names.csv', plain))).encoding, 'gb18030');
    // Valid UTF-8 by their bytes; read so, 史女士 is ʷŮʿ, 郑爽 ֣ˬ, 肖战 Фս, 袁泉 ԬȪ.
    const names = ['史女士', '郑爽', '肖战', '袁泉', '薛之', '郑隆'];
    for (const name of names) assert.ok(isUtf8(iconv.encode(name, 'gb18030')), name);
    const list = names.map((n, i) => `${13800000000 + i},${n}`).join('\r\n');
    const file = tempFile(
      'gb-utf8-names.csv',
      iconv.encode(`手机号,参数1\r\n${list}\r\n`, 'gb18030'),
    );
    const read = await readAs(file);
    assert.deepEqual([read.encoding, read.refused], ['gb18030', false]);
    const rows = await allRows(file, { ...DEFAULTS, encoding: 'gb18030' });
    assert.deepEqual(
      rows.map((r) => r.datas[0]),
      names,
    );
  });

  it('of the 11,594 two-character names whose GB18030 bytes are valid UTF-8, reads none as UTF-8', () => {
    const counts: Record<string, number> = {};
    for (const name of twoCharacterNames()) {
      const bytes = iconv.encode(name, 'gb18030');
      if (!isUtf8(bytes)) continue;
      const verdict = verdictOf(Buffer.concat([Buffer.from('phone,name\n13800138000,'), bytes]));
      counts[verdict] = (counts[verdict] ?? 0) + 1;
    }
    assert.deepEqual(Object.keys(counts).sort(), ['ambiguous', 'gb18030']);
    assert.equal(counts.ambiguous! + counts.gb18030!, 11_594);
    // Most read as no plausible text in UTF-8; the rest (Cyrillic pairs like 谢谢: лл) are refused.
    assert.deepEqual(counts, { gb18030: 9_039, ambiguous: 2_555 });
  });

  it('settles it by a BOM, by the name (NAME.utf8.csv, NAME.gb18030.csv) or by SMSDROP_ENCODING', async () => {
    const bytes = Buffer.from('phone,data1\n13800138000,Անի\n');
    assert.ok((await inspectFile(tempFile('ani.csv', bytes))).ambiguous);
    const settled = async (name: string, content: Buffer, setting?: 'utf-8' | 'gb18030') => {
      const inspection = await inspectFile(tempFile(name, content), setting);
      return [inspection.encoding, inspection.ambiguous === undefined];
    };
    assert.deepEqual(await settled('ani.utf8.csv', bytes), ['utf-8', true]);
    assert.deepEqual(await settled('ani.UTF-8.csv', bytes), ['utf-8', true]);
    assert.deepEqual(await settled('ani.gb18030.csv', bytes), ['gb18030', true]);
    assert.deepEqual(await settled('ani-set.csv', bytes, 'gb18030'), ['gb18030', true]);
    assert.deepEqual(await settled('ani-set.csv', bytes, 'utf-8'), ['utf-8', true]);
    // The name says more than the setting; a BOM more than both.
    assert.deepEqual(await settled('ani.utf8.csv', bytes, 'gb18030'), ['utf-8', true]);
    const bom = Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), bytes]);
    assert.deepEqual(await settled('ani-bom.gb18030.csv', bom), ['utf-8', true]);
  });

  it('sends a literal U+FFFD of a valid UTF-8 file as text; a stray byte still makes its row invalid', async () => {
    const file = tempFile('fffd.csv', 'phone,data1\n13800138000,37\uFFFD36\'37.8"N\n');
    const inspection = await inspectFile(file);
    const [row] = await allRows(file, { ...DEFAULTS, decodedExactly: inspection.exact });
    assert.equal(row!.error, undefined);
    assert.deepEqual(row!.datas, ['37\uFFFD36\'37.8"N']);
    const stray = tempFile(
      'stray.csv',
      Buffer.concat([Buffer.from('phone,data1\n13800138000,caf'), Buffer.from([0xe9, 0x0a])]),
    );
    const strayInspection = await inspectFile(stray);
    assert.equal(strayInspection.exact, false);
    const [bad] = await allRows(stray, {
      ...DEFAULTS,
      encoding: strayInspection.encoding,
      decodedExactly: strayInspection.exact,
    });
    assert.match(bad!.error ?? '', /bytes that are not text/);
  });
});
