// Names and moves: a file and its results always share one name, nothing is ever overwritten,
// and names that editors and browsers use while writing are left alone.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { after, describe, it } from 'node:test';
import { isIgnoredName } from '../../src/datadir/inbox.js';
import { isListName, stemOf } from '../../src/datadir/names.js';
import {
  filesOldestFirst,
  freeName,
  moveExact,
  moveUnique,
  prepareFolders,
} from '../../src/daemon/folders.js';
import { tempDir as makeTempDir } from './helpers.js';

const made: string[] = [];
const tempDir = (prefix: string) => {
  const dir = makeTempDir(prefix);
  made.push(dir);
  return dir;
};
after(() => {
  for (const dir of made) fs.rmSync(dir, { recursive: true, force: true });
});

describe('daemon folders', () => {
  it('creates inbox/, processing/, done/, failed/ and logs/ under the data directory', () => {
    const root = path.join(tempDir('folders'), 'nested', 'data');
    const folders = prepareFolders(root);
    for (const dir of [
      folders.inbox,
      folders.processing,
      folders.done,
      folders.failed,
      folders.logs,
    ])
      assert.ok(fs.statSync(dir).isDirectory());
    assert.equal(folders.inbox, path.join(path.resolve(root), 'inbox'));
  });

  it('ignores names being written until they are renamed', () => {
    for (const name of [
      '.a.csv',
      '~$a.csv',
      'a.csv.part',
      'a.csv.tmp',
      'a.csv.crdownload',
      'A.CSV.PART',
    ])
      assert.equal(isIgnoredName(name), true, name);
    for (const name of ['a.csv', 'a.part.csv', 'tmp.csv', 'a~$.csv'])
      assert.equal(isIgnoredName(name), false, name);
  });

  it('takes .csv, .tsv and .txt in any letter case', () => {
    const names = ['a.csv', 'a.CSV', 'a.Csv', 'a.tsv', 'a.TXT', 'a.csv.pdf', 'csv', 'a.tsv.xlsx'];
    assert.deepEqual(names.map(isListName), [true, true, true, true, true, false, false, false]);
    assert.equal(stemOf('a.CSV'), 'a');
    assert.equal(stemOf('a.tsv'), 'a');
    assert.equal(stemOf('Unicode Text.txt'), 'Unicode Text');
    assert.equal(stemOf('report.xlsx'), 'report.xlsx');
  });

  it('numbers a name taken in any folder, by the file or by one of its companions', () => {
    const [a, b] = [tempDir('names-a'), tempDir('names-b')];
    assert.equal(freeName('x.csv', [a, b]), 'x.csv');
    fs.writeFileSync(path.join(b, 'x.csv'), '');
    assert.equal(freeName('x.csv', [a, b]), 'x (2).csv');
    fs.writeFileSync(path.join(a, 'x (2).result.csv'), '');
    assert.equal(
      freeName('x.csv', [a, b]),
      'x (3).csv',
      'a leftover result file also takes the name',
    );
    fs.writeFileSync(path.join(a, 'y.error.txt'), '');
    assert.equal(freeName('y.csv', [a]), 'y (2).csv');
    // A file named like another's result file must not land on it.
    fs.writeFileSync(path.join(a, 'z.csv'), '');
    fs.writeFileSync(path.join(a, 'z.result.csv'), '');
    assert.equal(freeName('z.result.csv', [a]), 'z.result (2).csv');
    assert.equal(freeName('notes', [a]), 'notes');
  });

  it('moves without overwriting, and moveExact refuses an existing target', () => {
    const [from, to] = [tempDir('move-from'), tempDir('move-to')];
    fs.writeFileSync(path.join(to, 'a.csv'), 'first');
    fs.writeFileSync(path.join(from, 'a.csv'), 'second');
    assert.throws(() => moveExact(path.join(from, 'a.csv'), path.join(to, 'a.csv')), {
      code: 'EEXIST',
    });
    assert.equal(moveUnique(path.join(from, 'a.csv'), to, 'a.csv', []), 'a (2).csv');
    assert.equal(fs.readFileSync(path.join(to, 'a.csv'), 'utf8'), 'first');
    assert.equal(fs.readFileSync(path.join(to, 'a (2).csv'), 'utf8'), 'second');
    assert.deepEqual(fs.readdirSync(from), []);
  });

  it('lists the files of a folder in the order they were moved there, skipping staging folders', async () => {
    const [src, dir] = [tempDir('order-src'), tempDir('order')];
    for (const name of ['b.csv', 'a.csv', 'c.csv']) fs.writeFileSync(path.join(src, name), name);
    fs.mkdirSync(path.join(dir, '.staging-x.csv'));
    for (const name of ['c.csv', 'a.csv', 'b.csv']) {
      moveExact(path.join(src, name), path.join(dir, name));
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    assert.deepEqual(filesOldestFirst(dir), ['c.csv', 'a.csv', 'b.csv']);
  });
});
