// `smsdrop export` of a file whose rows were pruned (SMSDROP_KEEP, `smsdrop prune`): the journal
// has its counts, no longer its rows, so an export would be an empty list that reads as a file of
// nobody. It says so with its code and exits 2, and writes no file.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { after, describe, it } from 'node:test';
import { tempDir } from '../daemon/helpers.js';
import { smsdrop } from './helpers.js';

const dirs: string[] = [];
after(() => {
  for (const d of dirs) fs.rmSync(d, { recursive: true, force: true });
});

describe('export of a pruned file', () => {
  it('exits 2 with E_ROWS_PRUNED on stderr and writes nothing', async () => {
    const dir = tempDir('export-pruned');
    dirs.push(dir);
    const env = {
      SMSDROP_DATA_DIR: path.join(dir, 'data'),
      SMSDROP_REPEAT_WINDOW: 'off',
      SMSDROP_RESUME_WITHIN: 'off',
    };
    const file = path.join(dir, 'list.csv');
    fs.writeFileSync(file, 'phone,templateId,data1,data2\n13800000001,1,a,5\n13800000002,1,b,5\n');
    const sent = await smsdrop(['send', file], env);
    assert.equal(sent.status, 0, sent.stderr);
    const out = path.join(dir, 'before.csv');
    const before = await smsdrop(['export', 'list.csv', '--out', out], env);
    assert.equal(before.status, 0, before.stderr);
    assert.match(before.stderr, /^2 rows of list\.csv written/m);

    await sleep(1_100); // the file ended over a second ago
    const pruned = await smsdrop(['prune', '--older-than', '1s'], env);
    assert.equal(pruned.status, 0, pruned.stderr);

    const target = path.join(dir, 'after.csv');
    for (const args of [
      ['export', 'list.csv', '--out', target],
      ['export', '1', '--out', '-'],
    ]) {
      const run = await smsdrop(args, env);
      assert.equal(run.status, 2, `${args.join(' ')}\n${run.stdout}${run.stderr}`);
      const lines = run.stderr.trimEnd().split('\n');
      assert.equal(lines.length, 1, run.stderr);
      assert.match(
        lines[0]!,
        /^smsdrop: E_ROWS_PRUNED: list\.csv \(id 1\): its rows were pruned on .*smsdrop report 1/,
      );
      assert.equal(run.stdout, '', 'no CSV, not even a header');
    }
    assert.equal(fs.existsSync(target), false, 'no export file');
  });
});
