// Pruning leaves the files being processed alone, on each journal: the writer hands its set of busy
// files to Maintenance.prune, which asks it again before each file (one may be taken up while it
// runs).
import assert from 'node:assert/strict';
import { it } from 'node:test';
import type { JournalHandle } from '../../src/ports/index.js';
import { onEachJournal, type Subject } from './journals.js';

const ENDED_BEFORE = '2001-01-01T00:00:00.000Z';

/** `count` files that ended in 2000, one a day from the first of January: their ids. */
async function endedFiles(j: Subject, count: number): Promise<number[]> {
  const ids: number[] = [];
  for (let n = 1; n <= count; n++) {
    const file = await j.get<{ id: number }>(
      `INSERT INTO files (sha256, name, size, encoding, status, created_at, finished_at)
       VALUES (?, ?, 0, 'utf-8', 'done', '2000-01-01T00:00:00.000Z', ?) RETURNING id`,
      `sha${n}`,
      `f${n}.csv`,
      `2000-01-0${n}T00:00:00.000Z`,
    );
    ids.push(file!.id);
  }
  return ids;
}

async function prunedIds(journal: JournalHandle): Promise<number[]> {
  return [...(await journal.reads.prunedFileIds())].sort((a, b) => a - b);
}

onEachJournal('Maintenance.prune and the busy files', ({ open }) => {
  it('a busy file is not pruned, nor listed by a dry run; the others are', async () => {
    const j = await open();
    const [first, second, third] = await endedFiles(j, 3);
    const journal = j.handle;
    const busy = new Set([second!]);
    const dry = await journal.maintenance.prune({ endedBefore: ENDED_BEFORE, dryRun: true }, busy);
    assert.deepEqual(
      dry.files.map((f) => f.id),
      [first, third],
    );
    const result = await journal.maintenance.prune({ endedBefore: ENDED_BEFORE }, busy);
    assert.deepEqual(
      result.files.map((f) => f.id),
      [first, third],
    );
    assert.deepEqual(await prunedIds(journal), [first, third]);
    busy.clear();
    await journal.maintenance.prune({ endedBefore: ENDED_BEFORE }, busy);
    assert.deepEqual(
      await prunedIds(journal),
      [first, second, third],
      'once no longer busy, it goes',
    );
  });

  it('a file taken up while pruning runs is left alone (the set is asked before each file)', async () => {
    const j = await open();
    const [first, second, third] = await endedFiles(j, 3);
    const busy = new Set<number>();
    const result = await j.handle.maintenance.prune(
      {
        endedBefore: ENDED_BEFORE,
        // After the first file is marked, the third is taken up (a re-dropped copy, say).
        onStep: (what) => {
          if (what === 'mark') busy.add(third!);
        },
      },
      busy,
    );
    assert.deepEqual(
      result.files.map((f) => f.id),
      [first, second],
    );
    assert.deepEqual(await prunedIds(j.handle), [first, second]);
  });
});
