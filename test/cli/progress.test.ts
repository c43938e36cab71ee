// `smsdrop send`'s progress bar: bytes read of the file's size while it is read, then rows settled
// of the rows to send. What it shows is a pure function of where the run is; how far the reading
// has come is the reading descriptor's position.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, describe, it } from 'node:test';
import { bytesRead, progressView } from '../../src/cli/progress.js';

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'smsdrop-progress-test-'));
after(() => fs.rmSync(dir, { recursive: true, force: true }));

describe('send progress', () => {
  it('while the file is read: bytes read of its size, never more', () => {
    assert.deepEqual(
      progressView({ status: undefined, bytes: 0, size: 32_000_000, settled: 0, sendable: 0 }),
      { phase: 'reading', value: 0, total: 32_000_000, text: '0.0/32.0 MB' },
    );
    assert.deepEqual(
      progressView({
        status: 'intake',
        bytes: 12_345_678,
        size: 32_000_000,
        settled: 300_000,
        sendable: 9_400,
      }),
      {
        phase: 'reading',
        value: 12_345_678,
        total: 32_000_000,
        text: '12.3/32.0 MB',
      },
    );
    assert.equal(
      progressView({
        status: 'intake',
        bytes: 40_000_000,
        size: 32_000_000,
        settled: 0,
        sendable: 0,
      }).value,
      32_000_000,
      'read-ahead past the size',
    );
    assert.equal(
      progressView({
        status: 'intake',
        bytes: undefined,
        size: 32_000_000,
        settled: 0,
        sendable: 0,
      }).text,
      '32.0 MB',
      'no position where /proc cannot say',
    );
  });

  it('once every row is read: rows settled of the rows to send', () => {
    for (const status of ['sending', 'done', 'refused']) {
      assert.deepEqual(
        progressView({ status, bytes: 5, size: 10, settled: 1_200, sendable: 9_400 }),
        { phase: 'sending', value: 1_200, total: 9_400, text: '1200/9400 rows' },
      );
    }
  });

  it(
    "the bytes read are the sequential reader's position; readers at given offsets do not count",
    { skip: !fs.existsSync('/proc/self/fdinfo') },
    () => {
      const file = path.join(dir, 'rows.csv');
      fs.writeFileSync(file, 'x'.repeat(10_000));
      assert.equal(bytesRead(file), 0, 'not open');
      const sequential = fs.openSync(file, 'r');
      const atOffsets = fs.openSync(file, 'r');
      try {
        const buffer = Buffer.alloc(4_000);
        fs.readSync(atOffsets, buffer, 0, 4_000, 6_000);
        assert.equal(bytesRead(file), 0);
        fs.readSync(sequential, buffer, 0, 1_000, null);
        fs.readSync(sequential, buffer, 0, 2_500, null);
        assert.equal(bytesRead(path.relative(process.cwd(), file)), 3_500);
      } finally {
        fs.closeSync(sequential);
        fs.closeSync(atOffsets);
      }
      assert.equal(bytesRead(path.join(dir, 'missing.csv')), undefined);
    },
  );
});
