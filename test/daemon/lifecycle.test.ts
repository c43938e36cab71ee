// One file's life, in process, with a real journal and the built-in simulator: the same bytes
// never run twice at once, a file that finished just before a crash is filed with its results
// (not as a duplicate of itself), and an error fails that file only.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { after, describe, it } from 'node:test';
import { loadConfig } from '../../src/config/index.js';
import { prepareFolders } from '../../src/daemon/folders.js';
import type { FileLife } from '../../src/daemon/fileLife.js';
import { lateLimit } from '../../src/daemon/late.js';
import { handleFile, takeFile } from '../../src/daemon/lifecycle.js';
import { openWriter } from '../../src/journals/index.js';
import { silentLogger } from '../../src/log/logger.js';
import { processFile } from '../../src/pipeline/index.js';
import { openRuntime, type Runtime } from '../../src/pipeline/runtime.js';
import { acceptedPerNumber, contactsCsv, listDir, numbersOf, tempDir } from './helpers.js';

const WRITER = { role: 'test', synchronous: 'normal', reqIdOn: false, onLost: () => {} } as const;
const runtimes: Runtime[] = [];
const dirs: string[] = [];
after(async () => {
  for (const r of runtimes) await r.close();
  for (const dir of dirs) fs.rmSync(dir, { recursive: true, force: true });
});

async function setUp(name: string) {
  const dir = tempDir(name);
  dirs.push(dir);
  const folders = prepareFolders(path.join(dir, 'data'));
  const config = loadConfig({ env: { SMSDROP_DATA_DIR: folders.root }, configDir: dir });
  const runtime = await openRuntime(config, {
    role: 'test',
    log: silentLogger(),
    keepSimulatorRecords: true,
  });
  runtimes.push(runtime);
  const life: FileLife = {
    folders,
    ctx: runtime.context,
    files: runtime.journal.files,
    outbox: runtime.journal.outbox,
    log: silentLogger(),
    active: new Map(),
    busy: new Map(),
    cooldown: async () => {},
    fresh: new Set<string>(),
  };
  return { folders, runtime, life };
}

describe('daemon file lifecycle', () => {
  it('never runs the same bytes twice at once: the second waits, then is filed as a duplicate', async () => {
    const { folders, runtime, life } = await setUp('same-bytes');
    const csv = contactsCsv(6);
    fs.writeFileSync(path.join(folders.processing, 'a.csv'), csv);
    fs.writeFileSync(path.join(folders.processing, 'b.csv'), csv);
    const results = await Promise.all([handleFile(life, 'a.csv'), handleFile(life, 'b.csv')]);
    const waiting = results.findIndex((r) => r !== undefined);
    assert.notEqual(waiting, -1, 'one of the two waited');
    assert.equal(results.filter((r) => r !== undefined).length, 1);
    await results[waiting]!.again;
    const second = waiting === 0 ? 'a' : 'b';
    assert.equal(await handleFile(life, `${second}.csv`), undefined);
    assert.deepEqual(
      listDir(folders.done),
      ['a.csv', 'a.result.csv', 'b.csv', 'b.result.csv', `${second}.duplicate.txt`].sort(),
    );
    const counts = acceptedPerNumber(runtime.provider.simulator!.records);
    assert.deepEqual(
      numbersOf(6).map((n) => counts.get(n)),
      [1, 1, 1, 1, 1, 1],
    );
  });

  it('files a file that finished just before a crash with its own results, not as a duplicate of itself', async () => {
    const { folders, runtime, life } = await setUp('finished-unfiled');
    const file = path.join(folders.processing, 'a.csv');
    fs.writeFileSync(file, contactsCsv(3));
    assert.equal((await processFile(runtime.context, file, { name: 'a.csv' })).outcome, 'finished'); // then the "crash"
    const sent = runtime.provider.simulator!.records.length;
    await handleFile(life, 'a.csv');
    assert.deepEqual(listDir(folders.done), ['a.csv', 'a.result.csv']);
    assert.equal(runtime.provider.simulator!.records.length, sent, 'nothing sent again');
  });

  it('fails only that file when something breaks under it, with a note saying why', async () => {
    const { folders, life } = await setUp('broken');
    // Every way to the journal closed: the journal itself and its ports.
    const other = path.join(folders.root, 'other');
    fs.mkdirSync(other);
    const { handle } = await openWriter({ dataDir: other }, WRITER);
    await handle.close();
    const broken: FileLife = {
      ...life,
      files: handle.files,
      outbox: handle.outbox,
      ctx: { ...life.ctx, files: handle.files, reads: handle.reads, send: handle.send },
    };
    fs.writeFileSync(path.join(folders.processing, 'x.csv'), contactsCsv(2));
    assert.equal(await handleFile(broken, 'x.csv'), undefined, 'handled, not thrown');
    assert.deepEqual(listDir(folders.failed), ['x.csv', 'x.error.txt']);
    assert.match(
      fs.readFileSync(path.join(folders.failed, 'x.error.txt'), 'utf8'),
      /reason: .*not open/,
    );
    assert.deepEqual(listDir(folders.processing), []);
    assert.equal(broken.busy.size + broken.active.size, 0, 'nothing left marked as running');
  });

  it('takes a file into processing/ under a free name, and a vanished one not at all', async () => {
    const { folders, life } = await setUp('take');
    fs.writeFileSync(path.join(folders.done, 'a.csv'), 'earlier');
    fs.writeFileSync(path.join(folders.inbox, 'a.csv'), 'phone\n13800000000\n');
    assert.equal(takeFile(life, path.join(folders.inbox, 'a.csv')), 'a (2).csv');
    assert.deepEqual(listDir(folders.processing), ['a (2).csv']);
    assert.equal(takeFile(life, path.join(folders.inbox, 'gone.csv')), undefined);
  });
});

describe('late files: how long a file may rest (lateLimit)', () => {
  const config = (env: Record<string, string>) => {
    const dir = tempDir('late-limit');
    dirs.push(dir);
    return loadConfig({
      env: { SMSDROP_DATA_DIR: path.join(dir, 'data'), ...env },
      configDir: dir,
    });
  };
  it('is SMSDROP_RESUME_WITHIN, unless the sending and message windows can make a file wait longer', () => {
    assert.deepEqual(lateLimit(config({})), {
      ms: 24 * 3_600_000,
      text: 'SMSDROP_RESUME_WITHIN (24h)',
    });
    assert.equal(
      lateLimit(config({ SMSDROP_SEND_WINDOW: '08:00-22:00' })).ms,
      24 * 3_600_000,
      'closed 10 h a day: less than 24h',
    );
    const narrow = lateLimit(
      config({
        SMSDROP_RESUME_WITHIN: '2h',
        SMSDROP_SEND_WINDOW: '08:00-22:00',
        SMSDROP_MESSAGE_WINDOW: '500/1h',
      }),
    );
    assert.equal(narrow.ms, 11 * 3_600_000, 'closed 10 h, plus a message window of 1 h');
    assert.match(
      narrow.text,
      /^11 h 0 min, what the sending and message windows can make a file wait \(more than SMSDROP_RESUME_WITHIN \(2h\)\)$/,
    );
    assert.equal(
      lateLimit(config({ SMSDROP_RESUME_WITHIN: '1h', SMSDROP_SEND_WINDOW: '22:00-06:00' })).ms,
      16 * 3_600_000,
      'a window across midnight: open 8 h',
    );
  });
});
