// `smsdrop send` of a file refused as a whole (no phone column, not a list at all): its reason with
// its code on stderr, exit 2, and nothing written next to the input: a header-only result file
// would read as a list sent to nobody.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { after, describe, it } from 'node:test';
import { tempDir } from '../daemon/helpers.js';
import { smsdrop } from './helpers.js';

const dirs: string[] = [];
after(() => {
  for (const d of dirs) fs.rmSync(d, { recursive: true, force: true });
});

describe('send of a file refused as a whole', () => {
  for (const [name, text] of [
    ['no-phone.csv', 'name,amount\nZhang,12\n'],
    ['not-a-list.csv', 'this is a letter, not a list\n'],
  ] as const)
    it(`${name}: reason and code on stderr, exit 2, no result file next to it`, async () => {
      const dir = tempDir('refused-result');
      dirs.push(dir);
      const file = path.join(dir, name);
      fs.writeFileSync(file, text);
      const run = await smsdrop(['send', file], { SMSDROP_DATA_DIR: path.join(dir, 'data') });
      assert.equal(run.status, 2, run.stderr);
      assert.match(run.stderr, /^smsdrop: E_NO_PHONE_COLUMN: .*no phone column/m);
      assert.deepEqual(
        fs.readdirSync(dir).filter((f) => f !== 'data'),
        [name],
        'only the input beside it',
      );
    });
});
