// inspectFile: fingerprint and encoding of real files (the committed GB18030 Excel export included).
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import { inspectFile } from '../../src/intake/index.js';
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
      { ...(await inspectFile(path.join(FIXTURES, 'utf8-bom-crlf.csv'))), sha256: undefined, size: undefined },
      { encoding: 'utf-8', bom: true, quoted: true, sha256: undefined, size: undefined },
    );
  });

  it('reads valid UTF-8 without BOM as UTF-8', async () => {
    const file = tempFile('plain.csv', '手机号,参数1\n13800138000,你好\n');
    assert.deepEqual({ ...(await inspectFile(file)), sha256: '' }, { sha256: '', size: fs.statSync(file).size, encoding: 'utf-8', bom: false, quoted: false });
  });

  it('notes a double quote anywhere, even past the first chunks (sending then waits for the last row)', async () => {
    const ascii = Buffer.alloc(3 * 1024 * 1024, 'a');
    assert.equal((await inspectFile(tempFile('unquoted.csv', ascii))).quoted, false);
    assert.equal((await inspectFile(tempFile('quoted-late.csv', Buffer.concat([ascii, Buffer.from('\n"x,y"\n')])))).quoted, true);
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

  it('accepts a multi-byte character split across read chunks as UTF-8', async () => {
    const file = tempFile('split.csv', Buffer.concat([Buffer.alloc(256 * 1024 - 1, 'a'), Buffer.from('张三')]));
    assert.equal((await inspectFile(file)).encoding, 'utf-8');
  });

  it('rejects UTF-8 cut off in the middle of a character at the end of the file', async () => {
    const file = tempFile('cut.csv', Buffer.concat([Buffer.from('abc'), Buffer.from('张').subarray(0, 2)]));
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
