// inspectFile: fingerprint and encoding of real files (the committed GB18030 Excel export
// included).
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import iconv from 'iconv-lite';
import { inspectFile } from '../../src/intake/index.js';
import { utf8Checker, wholeCharacters } from '../../src/intake/inspect.js';
import { FIXTURES, tempFile } from './helpers.js';

describe('inspectFile', () => {
  it('hashes and measures the file', async () => {
    const bytes = Buffer.from('phone\r\n13800138000\r\n');
    const file = tempFile('hash.csv', bytes);
    const inspection = await inspectFile(file);
    assert.equal(inspection.sha256, createHash('sha256').update(bytes).digest('hex'));
    assert.equal(inspection.size, bytes.length);
  });

  it('reads a UTF-8 BOM as UTF-8 (Excel "CSV UTF-8")', async () => {
    assert.deepEqual(
      {
        ...(await inspectFile(path.join(FIXTURES, 'utf8-bom-crlf.csv'))),
        sha256: undefined,
        size: undefined,
        longestLine: undefined,
      },
      {
        encoding: 'utf-8',
        delimiter: ',',
        exact: true,
        bom: true,
        quoted: true,
        sha256: undefined,
        size: undefined,
        longestLine: undefined,
      },
    );
  });

  it('reads valid UTF-8 without BOM as UTF-8', async () => {
    const file = tempFile('plain.csv', '手机号,参数1\n13800138000,你好\n');
    assert.deepEqual(
      { ...(await inspectFile(file)), sha256: '' },
      {
        sha256: '',
        size: fs.statSync(file).size,
        encoding: 'utf-8',
        delimiter: ',',
        exact: true,
        bom: false,
        quoted: false,
        longestLine: 18,
      },
    );
  });

  it('measures the longest line, across reads (a line past the record limit is read whole before anything is sent)', async () => {
    const long = Buffer.concat([
      Buffer.from('phone\n'),
      Buffer.alloc(600 * 1024, 'a'),
      Buffer.from('\nshort\n'),
    ]); // the long line spans 3 reads of 256 KB
    assert.equal((await inspectFile(tempFile('long-line.csv', long))).longestLine, 600 * 1024);
    assert.equal((await inspectFile(tempFile('no-break.csv', 'abc'))).longestLine, 3);
  });

  it('notes a double quote anywhere, even past the first chunks (sending then waits for the last row)', async () => {
    const ascii = Buffer.alloc(3 * 1024 * 1024, 'a');
    assert.equal((await inspectFile(tempFile('unquoted.csv', ascii))).quoted, false);
    assert.equal(
      (
        await inspectFile(
          tempFile('quoted-late.csv', Buffer.concat([ascii, Buffer.from('\n"x,y"\n')])),
        )
      ).quoted,
      true,
    );
  });

  it('reads a Chinese Excel export (GB18030) as GB18030', async () => {
    const inspection = await inspectFile(path.join(FIXTURES, 'gb18030-excel.csv'));
    assert.equal(inspection.encoding, 'gb18030');
    assert.equal(inspection.bom, false);
  });

  it('decides GB18030 when the only invalid UTF-8 is far into the file (past the first chunks)', async () => {
    const ascii = Buffer.alloc(3 * 1024 * 1024, 'a');
    const file = tempFile('late.csv', Buffer.concat([ascii, Buffer.from([0xd5, 0xc5])])); // 张 in GB18030
    assert.equal((await inspectFile(file)).encoding, 'gb18030');
  });

  it('reads UTF-8 text with a few stray bytes as UTF-8, not GB18030 (which would garble every Chinese value)', async () => {
    const rows = Array.from({ length: 300 }, (_, i) => `${13800000000 + i},您好张三,5分钟`).join(
      '\n',
    );
    const stray = Buffer.concat([
      Buffer.from(`phone,data1,data2\n${rows}\n1390000000`),
      Buffer.from([0xe9]),
      Buffer.from(',caf\n'),
    ]); // Latin-1 é
    assert.equal((await inspectFile(tempFile('stray.csv', stray))).encoding, 'utf-8');
    // Long GB18030 text also has some valid UTF-8 sequences by chance (about 1 per 10 invalid
    // ones).
    const gb = iconv.encode(
      `phone,data1\n${Array.from({ length: 3000 }, (_, i) => `${13800000000 + i},尊敬的客户您的订单已发货请查收验证码`).join('\n')}\n`,
      'gb18030',
    );
    assert.equal((await inspectFile(tempFile('gb-long.csv', gb))).encoding, 'gb18030');
    // Many common GB2312 characters are valid 2-byte UTF-8 by themselves (女士: C5 AE CA BF).
    const salut = iconv.encode(
      `phone,data1\n${Array.from({ length: 200 }, (_, i) => `${13800000000 + i},${i % 10 ? '女士' : '先生'}`).join('\n')}\n`,
      'gb18030',
    );
    assert.equal((await inspectFile(tempFile('gb-salut.csv', salut))).encoding, 'gb18030');
  });

  it('reads GB18030 whose every character is also valid UTF-8 as GB18030 (128.00元 read as UTF-8 is 128.00Ԫ)', async () => {
    const amounts = iconv.encode(
      'mobile,templateId,data1,data2\r\n13800138000,1,128.00元,2026-11-30\r\n13800138001,1,99.50元,2026-12-01\r\n',
      'gb18030',
    );
    assert.equal((await inspectFile(tempFile('gb-amounts.csv', amounts))).encoding, 'gb18030');
    const names = iconv.encode('phone,data1\n13800138000,史女士\n', 'gb18030'); // CA B7 C5 AE CA BF: valid UTF-8 too
    assert.equal((await inspectFile(tempFile('gb-name.csv', names))).encoding, 'gb18030');
    // The cut pair at a read's end (256 KB) is judged with the next read.
    const padded = Buffer.concat([
      Buffer.alloc(256 * 1024 - 2, 'a'),
      iconv.encode(',元\n2,元\n', 'gb18030'),
    ]);
    assert.equal((await inspectFile(tempFile('gb-cut.csv', padded))).encoding, 'gb18030');
  });

  it('keeps UTF-8 whose only non-ASCII letters are European (José, Müller, Ωmega, Иван) as UTF-8, and any file with Chinese in UTF-8', async () => {
    assert.equal(
      (
        await inspectFile(
          tempFile('latin.csv', 'phone,data1\n13800138000,José Müller\n13800138001,Ωmega Иван\n'),
        )
      ).encoding,
      'utf-8',
    );
    assert.equal(
      (await inspectFile(tempFile('mixed.csv', 'phone,data1\n13800138000,Ԫ 元\n'))).encoding,
      'utf-8',
    );
    // Vietnamese letters of Latin Extended-B, and one modifier apostrophe among accented names.
    assert.equal(
      (
        await inspectFile(
          tempFile('viet.csv', 'phone,data1\n13800138000,Dương\n13800138001,Phương\n'),
        )
      ).encoding,
      'utf-8',
    );
    // GB2312 characters that read as Cyrillic (一: һ) do not outweigh one that reads as nothing a
    // list holds (元).
    assert.equal(
      (
        await inspectFile(
          tempFile(
            'gb-school.csv',
            iconv.encode(
              'phone,school,amount\n13800138000,一,128.00元\n13800138001,小学,99.00元\n',
              'gb18030',
            ),
          ),
        )
      ).encoding,
      'gb18030',
    );
  });

  it('accepts a multi-byte character split across read chunks as UTF-8', async () => {
    const file = tempFile(
      'split.csv',
      Buffer.concat([Buffer.alloc(256 * 1024 - 1, 'a'), Buffer.from('张三')]),
    );
    assert.equal((await inspectFile(file)).encoding, 'utf-8');
  });

  it('keeps the bytes of a character cut by a read when the next read fills the same buffer', async () => {
    // Reads of 256 KB go into one buffer: the cut first byte of 张 must be copied, not kept as a
    // view of the buffer, where the second read puts an "a".
    const file = tempFile(
      'reused.csv',
      Buffer.concat([
        Buffer.alloc(256 * 1024 - 1, 'a'),
        Buffer.from('张'),
        Buffer.alloc(256 * 1024 + 10, 'a'),
      ]),
    );
    assert.equal((await inspectFile(file)).encoding, 'utf-8');
  });

  it('rejects UTF-8 cut off in the middle of a character at the end of the file', async () => {
    const file = tempFile(
      'cut.csv',
      Buffer.concat([Buffer.from('abc'), Buffer.from('张').subarray(0, 2)]),
    );
    assert.equal((await inspectFile(file)).encoding, 'gb18030');
  });

  it('handles an empty file', async () => {
    const inspection = await inspectFile(tempFile('empty.csv', ''));
    assert.equal(inspection.size, 0);
    assert.equal(inspection.encoding, 'utf-8');
  });

  it('rejects an unreadable file with the file system error', async () => {
    await assert.rejects(inspectFile(path.join(FIXTURES, 'no-such-file.csv')), /ENOENT/);
  });
});

describe('the streaming UTF-8 check', () => {
  it('finds where the last whole character ends', () => {
    const zhang = Buffer.from('张'); // 3 bytes
    const emoji = Buffer.from('😀'); // 4 bytes
    assert.equal(wholeCharacters(Buffer.from('abc')), 3);
    assert.equal(wholeCharacters(Buffer.concat([Buffer.from('a'), zhang])), 4);
    assert.equal(wholeCharacters(Buffer.concat([Buffer.from('a'), zhang.subarray(0, 2)])), 1);
    assert.equal(wholeCharacters(Buffer.concat([Buffer.from('a'), emoji.subarray(0, 3)])), 1);
    assert.equal(wholeCharacters(Buffer.concat([Buffer.from('a'), emoji.subarray(0, 1)])), 1);
    // No first byte at all: left to isUtf8.
    assert.equal(wholeCharacters(Buffer.from([0x80, 0x80])), 2);
  });

  it('says what a fatal TextDecoder says, however the bytes are cut into reads', () => {
    // Random mixes of ASCII, 2-, 3- and 4-byte characters and stray bytes, cut at random places.
    let seed = 7;
    const random = (n: number) => {
      seed = (Math.imul(seed, 1103515245) + 12345) >>> 0;
      return seed % n;
    };
    const pieces = [
      Buffer.from('a,1'),
      Buffer.from('é'),
      Buffer.from('张'),
      Buffer.from('😀'),
      Buffer.from([0xff]),
      Buffer.from([0x80]),
      Buffer.from([0xe5, 0xbc]),
      Buffer.from([0xed, 0xa0, 0x80]),
    ];
    for (let round = 0; round < 3000; round++) {
      const bytes = Buffer.concat(
        Array.from(
          { length: 1 + random(8) },
          () => pieces[random(round % 3 === 0 ? pieces.length : 4)]!,
        ),
      );
      let expected = true;
      try {
        new TextDecoder('utf-8', { fatal: true }).decode(bytes);
      } catch {
        expected = false;
      }
      const checker = utf8Checker();
      for (let at = 0; at < bytes.length;) {
        const next = Math.min(bytes.length, at + 1 + random(5));
        checker.push(bytes.subarray(at, next));
        at = next;
      }
      assert.equal(checker.end(), expected, `bytes ${bytes.toString('hex')}`);
    }
  });
});
