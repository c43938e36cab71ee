// What inbox/ holds that is not a CSV file to send: a workbook, a folder, a link to nothing.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import type { FileLife } from '../../src/daemon/fileLife.js';
import { takeFile } from '../../src/daemon/lifecycle.js';
import { prepareFolders } from '../../src/daemon/folders.js';
import { watchInbox } from '../../src/daemon/watch.js';
import { silentLogger } from '../../src/log/logger.js';
import { tempDir } from './helpers.js';

/** Waits until `check` holds (the runner's timeout is the limit). */
async function until(check: () => boolean): Promise<void> {
  while (!check()) await new Promise((r) => setTimeout(r, 20));
}

describe('an Excel workbook dropped into inbox/', () => {
  for (const name of ['list.xlsx', 'old.XLS']) {
    it(`${name} goes to failed/ with "save it as CSV UTF-8", not "rename it"`, () => {
      const folders = prepareFolders(path.join(tempDir('inbox-excel'), 'data'));
      fs.writeFileSync(path.join(folders.inbox, name), 'PK\x03\x04');
      const life = {
        folders,
        ctx: { config: { shareWithGroup: false } },
        outbox: { hasTargets: () => false },
        log: silentLogger(),
        fresh: new Set<string>(),
      } as unknown as FileLife;
      assert.equal(takeFile(life, path.join(folders.inbox, name)), undefined);
      const note = fs.readFileSync(path.join(folders.failed, `${name}.error.txt`), 'utf8');
      assert.match(note, /reason: E_FILE_EXCEL: this is an Excel workbook: save it as CSV UTF-8/);
      assert.doesNotMatch(note, /rename/);
    });
  }
});

describe('watching inbox/', () => {
  it('tells a folder and a symbolic link to nothing once each, at start and when they appear later; files are still reported', async () => {
    const inbox = tempDir('inbox-watch');
    fs.mkdirSync(path.join(inbox, 'old folder'));
    fs.symlinkSync(path.join(inbox, 'gone.csv'), path.join(inbox, 'broken.csv'));
    fs.writeFileSync(path.join(inbox, 'target.csv'), 'phone\n');
    fs.symlinkSync(path.join(inbox, 'target.csv'), path.join(inbox, 'working-link.csv'));
    const told: string[] = [];
    const files: string[] = [];
    const watcher = await watchInbox(inbox, {
      stabilityMs: 100,
      rescanMs: 60_000,
      onFile: (file) => files.push(path.basename(file)),
      onError: (err) => assert.fail(err),
      onNotAFile: (entry, what) => told.push(`${path.basename(entry)}: ${what}`),
    });
    try {
      assert.deepEqual(told.sort(), [
        'broken.csv: a symbolic link to nothing',
        'old folder: a folder',
      ]);
      fs.mkdirSync(path.join(inbox, 'new folder'));
      fs.symlinkSync(path.join(inbox, 'nowhere'), path.join(inbox, 'late-link.csv'));
      fs.writeFileSync(path.join(inbox, 'real.csv'), 'phone\n13800000001\n');
      await until(() => told.length === 4 && files.includes('real.csv'));
      fs.writeFileSync(path.join(inbox, 'more.csv'), 'phone\n13800000002\n');
      await until(() => files.includes('more.csv'));
      assert.deepEqual(told.slice(2).sort(), [
        'late-link.csv: a symbolic link to nothing',
        'new folder: a folder',
      ]);
      assert.equal(told.length, 4, 'each told once, however often the folder changes');
      assert.ok(files.includes('working-link.csv') && files.includes('target.csv'));
    } finally {
      await watcher.close();
    }
  });
});

describe('watching inbox/: whatever the order of events', () => {
  it('reports each file of a burst once, and a file renamed over one not yet stable once, as it ends', async () => {
    const inbox = tempDir('inbox-burst');
    const staging = tempDir('inbox-burst-staging');
    const reported: Array<{ name: string; text: string }> = [];
    const watcher = await watchInbox(inbox, {
      stabilityMs: 300,
      rescanMs: 3_600_000,
      onFile: (file) => {
        reported.push({ name: path.basename(file), text: fs.readFileSync(file, 'utf8') });
        fs.rmSync(file); // taken
      },
      onError: (err) => assert.fail(err),
    });
    try {
      const names = Array.from({ length: 50 }, (_, i) => `burst-${i}.csv`);
      for (const name of names) {
        fs.writeFileSync(path.join(staging, name), `phone\n${name}\n`);
        fs.renameSync(path.join(staging, name), path.join(inbox, name));
      }
      fs.writeFileSync(path.join(inbox, 'over.csv'), 'phone\nfirst\n');
      fs.writeFileSync(path.join(staging, 'over.csv'), 'phone\nsecond\n');
      fs.renameSync(path.join(staging, 'over.csv'), path.join(inbox, 'over.csv'));
      await until(() => reported.length >= 51);
      await new Promise((resolve) => setTimeout(resolve, 500)); // nothing reported twice
      assert.deepEqual(reported.map((r) => r.name).sort(), [...names, 'over.csv'].sort());
      assert.equal(reported.find((r) => r.name === 'over.csv')?.text, 'phone\nsecond\n');
    } finally {
      await watcher.close();
    }
  });
});
