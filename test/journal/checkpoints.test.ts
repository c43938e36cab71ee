// The WAL of the process that sends is checkpointed on a thread of its own (checkpoints.ts): the
// main connection's own checkpoints then find little left to copy and sync (they held the event
// loop 55-75 ms each while a 1M-row file was read). What is checked is where the pages go, with a
// real journal file: into the database while the main thread only commits; nothing is timed.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { setTimeout as sleep } from 'node:timers/promises';
import { after, describe, it } from 'node:test';
import {
  askThread,
  CHECKPOINT_EVERY_MS,
  checkpointsOnThread,
  startCheckpoints,
  stopCheckpoints,
} from '../../src/journal/checkpoints.js';
import { insideOf, type Journal } from '../../src/journal/connection.js';
import { openJournal, WAL_CHECKPOINT_PAGES } from '../../src/journal/open.js';
import { handleOf } from '../../src/journal/handle.js';
import { journalPath } from '../../src/journal/paths.js';
import { loadConfig } from '../../src/config/index.js';
import { silentLogger } from '../../src/log/logger.js';
import { openRuntime } from '../../src/pipeline/runtime.js';
import { sqliteOf } from './sqliteOf.js';

const dir = mkdtempSync(path.join(os.tmpdir(), 'smsdrop-checkpoints-'));
after(() => rmSync(dir, { recursive: true, force: true }));

/** About 3,000 pages in three commits: fewer than either bound of the main connection. */
function commitPages(db: Journal): void {
  sqliteOf(db).exec('CREATE TABLE scratch (filler BLOB NOT NULL)');
  const insert = sqliteOf(db).prepare('INSERT INTO scratch (filler) VALUES (zeroblob(3000))');
  const commit = sqliteOf(db).transaction(() => {
    for (let i = 0; i < 1000; i++) insert.run();
  });
  for (let n = 0; n < 3; n++) commit();
}

/** Waits (a loaded machine: up to 60 checkpoint periods) until `done` holds. */
async function eventually(done: () => boolean): Promise<boolean> {
  for (let i = 0; i < 60 && !done(); i++) await sleep(CHECKPOINT_EVERY_MS);
  return done();
}

const pagesIn = (file: string, db: Journal): number =>
  statSync(file).size / (sqliteOf(db).pragma('page_size', { simple: true }) as number);

describe('checkpoints on a thread of their own', () => {
  it('copy the commits into the database while the main connection only commits', async () => {
    const file = path.join(dir, 'thread.sqlite');
    const db = openJournal(file);
    const handle = handleOf(db);
    try {
      startCheckpoints(db, 'normal');
      assert.ok(checkpointsOnThread(db));
      // The main connection's own bound stays: fewer pages than it are written below.
      assert.equal(
        sqliteOf(db).pragma('wal_autocheckpoint', { simple: true }),
        WAL_CHECKPOINT_PAGES,
      );
      assert.ok(WAL_CHECKPOINT_PAGES > 3000);
      commitPages(db);
      assert.ok(
        await eventually(() => pagesIn(file, db) > 2500),
        `the database holds ${pagesIn(file, db)} pages: the thread copied nothing`,
      );
    } finally {
      await handle.close();
    }
    assert.equal(checkpointsOnThread(db), false, 'closing the journal ends the thread');
  });

  it('leave the pages in the WAL without the thread (what the first test tells apart)', async () => {
    const file = path.join(dir, 'inline.sqlite');
    const db = openJournal(file);
    try {
      commitPages(db);
      await sleep(4 * CHECKPOINT_EVERY_MS);
      assert.ok(pagesIn(file, db) < 100, `the database holds ${pagesIn(file, db)} pages`);
    } finally {
      db.close();
    }
  });

  it('leave the journal as it was when the thread ends on its own', async () => {
    const db = openJournal(path.join(dir, 'ended.sqlite'));
    const handle = handleOf(db);
    startCheckpoints(db, 'full');
    // Once it has started (it answers): terminated while it loads SQLite, it may take the process
    // down (the test below).
    await askThread(db, { op: 'drop', table: 'none' })?.catch(() => {});
    await insideOf(db).checkpoints!.worker.terminate();
    assert.ok(await eventually(() => !checkpointsOnThread(db)));
    assert.equal(sqliteOf(db).pragma('wal_autocheckpoint', { simple: true }), WAL_CHECKPOINT_PAGES);
    commitPages(db);
    await handle.close();
  });
});

describe("the journal's thread starting", () => {
  it('has the memory to start and answer, ten times in ten (through tsx too)', async () => {
    // Its heap was capped at 8 MB: through tsx (these tests, smsdrop run from its sources) it ran
    // out while it loaded its modules 13 times in 15 on Node 22, and once out while it loaded
    // SQLite's addon, the process aborted (FATAL ERROR: Error::New napi_get_last_error_info).
    const db = openJournal(path.join(dir, 'starts.sqlite'));
    let answered = 0;
    try {
      for (let i = 0; i < 10; i++) {
        startCheckpoints(db, 'normal');
        // It answers "no look-up none" once it runs; it fails the request if it ended first.
        await askThread(db, { op: 'drop', table: 'none' })?.catch((err: Error) => {
          if (/no look-up none/.test(err.message)) answered++;
        });
        await stopCheckpoints(db);
      }
    } finally {
      db.close();
    }
    assert.equal(answered, 10);
  });
});

describe("stopping the journal's thread", () => {
  it('never takes the process down, even while the thread still starts', async () => {
    // Four processes at once, each starting and stopping the thread 40 times after random waits:
    // terminated while it loaded SQLite's addon, the thread aborted the process (Node 26, "FATAL
    // ERROR: Error::New napi_get_last_error_info"), two runs in four before it was asked to stop.
    const child = path.join(path.dirname(fileURLToPath(import.meta.url)), 'startStopThread.ts');
    const runs = await Promise.all(
      [0, 1, 2, 3].map((n) => {
        const folder = path.join(dir, `stops-${n}`);
        mkdirSync(folder);
        return new Promise<{ code: number | null; out: string }>((resolve) => {
          const proc = spawn(process.execPath, ['--import', 'tsx', child, folder, '100'], {
            stdio: ['ignore', 'pipe', 'pipe'],
            // Never outlives its test.
            timeout: 240_000,
            killSignal: 'SIGKILL',
          });
          let out = '';
          proc.stdout.on('data', (d: Buffer) => (out += d.toString()));
          proc.stderr.on('data', (d: Buffer) => (out += d.toString()));
          proc.once('close', (code) => resolve({ code, out }));
        });
      }),
    );
    for (const run of runs) assert.deepEqual([run.code, run.out.trim()], [0, 'ok'], run.out);
  });
});

describe('the journal of a process that sends (openRuntime: send, run, retry, resume)', () => {
  it('is checkpointed on a thread: pages another connection commits reach the database', async () => {
    const data = path.join(dir, 'runtime');
    mkdirSync(data);
    const config = loadConfig({ env: { SMSDROP_DATA_DIR: data }, configDir: dir });
    const runtime = await openRuntime(config, { role: 'test', log: silentLogger() });
    // A second connection to the same journal: the thread checkpoints the WAL, whoever wrote it.
    const file = journalPath(data);
    try {
      const other = openJournal(file);
      try {
        commitPages(other);
        assert.ok(
          await eventually(() => pagesIn(file, other) > 2500),
          `the database holds ${pagesIn(file, other)} pages: no thread checkpointed them`,
        );
      } finally {
        other.close();
      }
    } finally {
      await runtime.close();
    }
  });
});
