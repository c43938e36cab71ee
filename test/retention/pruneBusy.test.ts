// Pruning leaves the files being processed alone: the writer hands its set of busy files to
// Maintenance.prune, which asks it again before each file (one may be taken up while it runs).
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, test } from 'node:test';
import type { JournalHandle } from '../../src/ports/index.js';
import { journalPath, openWriter } from '../../src/journal/index.js';
import Database from '../../src/journal/sqlite.js';

const dirs: string[] = [];
after(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

/** A data directory whose journal holds `count` files that ended in 2000, ids 1..count. */
async function dataDirWithEndedFiles(count: number): Promise<string> {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'smsdrop-prune-busy-'));
  dirs.push(dir);
  const { handle } = openWriter(dir, writerOptions);
  await handle.close();
  const db = new Database(journalPath(dir));
  const insert = db.prepare(
    `INSERT INTO files (id, sha256, name, size, encoding, status, created_at, finished_at)
     VALUES (?, ?, ?, 0, 'utf-8', 'done', '2000-01-01T00:00:00.000Z', ?)`,
  );
  for (let id = 1; id <= count; id++)
    insert.run(id, `sha${id}`, `f${id}.csv`, `2000-01-0${id}T00:00:00.000Z`);
  db.close();
  return dir;
}

const writerOptions = {
  role: 'test',
  synchronous: 'normal',
  reqIdOn: false,
  onLost: () => {},
} as const;

const ENDED_BEFORE = '2001-01-01T00:00:00.000Z';

async function withWriter<T>(dir: string, use: (journal: JournalHandle) => Promise<T>): Promise<T> {
  const { handle } = openWriter(dir, writerOptions);
  try {
    return await use(handle);
  } finally {
    await handle.close();
  }
}

async function prunedIds(journal: JournalHandle): Promise<number[]> {
  return [...(await journal.reads.prunedFileIds())].sort((a, b) => a - b);
}

test('a busy file is not pruned, nor listed by a dry run; the others are', async () => {
  const dir = await dataDirWithEndedFiles(3);
  await withWriter(dir, async (journal) => {
    const busy = new Set([2]);
    const dry = await journal.maintenance.prune({ endedBefore: ENDED_BEFORE, dryRun: true }, busy);
    assert.deepEqual(
      dry.files.map((f) => f.id),
      [1, 3],
    );
    const result = await journal.maintenance.prune({ endedBefore: ENDED_BEFORE }, busy);
    assert.deepEqual(
      result.files.map((f) => f.id),
      [1, 3],
    );
    assert.deepEqual(await prunedIds(journal), [1, 3]);
    busy.clear();
    await journal.maintenance.prune({ endedBefore: ENDED_BEFORE }, busy);
    assert.deepEqual(await prunedIds(journal), [1, 2, 3], 'once no longer busy, it goes');
  });
});

test('a file taken up while pruning runs is left alone (the set is asked before each file)', async () => {
  const dir = await dataDirWithEndedFiles(3);
  await withWriter(dir, async (journal) => {
    const busy = new Set<number>();
    const result = await journal.maintenance.prune(
      {
        endedBefore: ENDED_BEFORE,
        // After the first file is marked, file 3 is taken up (a re-dropped copy, say).
        onStep: (what) => {
          if (what === 'mark') busy.add(3);
        },
      },
      busy,
    );
    assert.deepEqual(
      result.files.map((f) => f.id),
      [1, 2],
    );
    assert.deepEqual(await prunedIds(journal), [1, 2]);
  });
});
