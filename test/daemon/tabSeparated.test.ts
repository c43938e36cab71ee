// Excel's tab-separated exports dropped into inbox/: a .tsv, and "Unicode Text" (NAME.txt,
// UTF-16LE with a byte order mark, tabs) are taken and sent like any CSV, their results beside
// them in done/.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import { listDir, resultRows, startDaemon, tempDir, waitUntil } from './helpers.js';

function tabRows(from: number): string {
  const rows = [0, 1, 2].map((i) => `${13_800_000_000 + from + i}\t1\t张三${i}\t5`);
  return `手机号\t模板\t参数1\t参数2\r\n${rows.join('\r\n')}\r\n`;
}

describe('smsdrop run: tab-separated files dropped into inbox/', () => {
  it('takes a .tsv and a "Unicode Text" .txt, sends every row, and files them in done/', async () => {
    const data = path.join(tempDir('tabs'), 'data');
    const daemon = await startDaemon({ dataDir: data });
    try {
      fs.writeFileSync(path.join(data, 'inbox', 'list.tsv'), tabRows(0));
      const unicodeText = Buffer.from(`\uFEFF${tabRows(10)}`, 'utf16le');
      fs.writeFileSync(path.join(data, 'inbox', 'Unicode Text.txt'), unicodeText);
      const done = path.join(data, 'done');
      const expected = ['list.result.csv', 'Unicode Text.result.csv'];
      await waitUntil(
        () => expected.every((name) => fs.existsSync(path.join(done, name))),
        60_000,
        expected.join(', '),
        daemon.output,
      );
      for (const name of expected) {
        const rows = resultRows(path.join(done, name));
        assert.deepEqual(
          rows.map((r) => [r.status, r.phone]),
          [0, 1, 2].map((i) => [
            'accepted',
            String(13_800_000_000 + (name === expected[0] ? 0 : 10) + i),
          ]),
          name,
        );
      }
      assert.deepEqual(listDir(path.join(data, 'failed')), []);
      assert.ok(listDir(done).includes('list.tsv') && listDir(done).includes('Unicode Text.txt'));
    } finally {
      daemon.kill('SIGKILL');
      await daemon.exited;
    }
  });
});
