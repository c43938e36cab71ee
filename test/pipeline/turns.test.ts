import { test } from 'node:test';
import assert from 'node:assert/strict';
import { IntakeTurns } from '../../src/pipeline/turns.js';
import { FilesInProgress } from '../../src/pipeline/inProgress.js';

/** The journal's turn as a journal only this process writes gives it, counting who holds it. */
function journalTurns(): { intakeTurn: () => Promise<() => Promise<void>>; held: () => number } {
  let held = 0;
  return {
    intakeTurn: () => {
      held++;
      return Promise.resolve(async () => {
        await new Promise((resolve) => setImmediate(resolve));
        held--;
      });
    },
    held: () => held,
  };
}

test('intake turns: each waits until the one before has ended its turn', async () => {
  const turns = new IntakeTurns(journalTurns());
  const order: string[] = [];
  const firstOver = await turns.next();
  const second = turns.next().then((over) => {
    order.push('second');
    return over;
  });
  const third = turns.next().then((over) => {
    order.push('third');
    over();
  });
  await new Promise((resolve) => setImmediate(resolve));
  assert.deepEqual(order, [], 'nobody goes before the first ends its turn');
  firstOver();
  firstOver(); // a second call does nothing
  const secondOver = await second;
  await new Promise((resolve) => setImmediate(resolve));
  assert.deepEqual(order, ['second']);
  secondOver();
  await third;
  assert.deepEqual(order, ['second', 'third']);
});

test("intake turns: the journal's turn is given back before the next intake here takes it", async () => {
  const journal = journalTurns();
  const turns = new IntakeTurns(journal);
  const firstOver = await turns.next();
  const heldWhenSecondStarts = turns.next().then((over) => {
    const held = journal.held();
    over();
    return held;
  });
  assert.equal(journal.held(), 1);
  firstOver();
  assert.equal(await heldWhenSecondStarts, 1, 'one turn of the journal at a time');
});

test('intake turns: a journal that cannot give its turn lets the next intake here try', async () => {
  let calls = 0;
  const turns = new IntakeTurns({
    intakeTurn: () =>
      ++calls === 1
        ? Promise.reject(new Error('E_DATABASE_UNREACHABLE'))
        : Promise.resolve(async () => {}),
  });
  await assert.rejects(turns.next(), /E_DATABASE_UNREACHABLE/);
  const over = await turns.next();
  over();
});

test('files in progress: kept in the set given, counted', () => {
  const ids = new Set<number>();
  const busy = new FilesInProgress(ids);
  busy.add(3);
  busy.add(5);
  assert.equal(busy.has(3), true);
  assert.equal(busy.size, 2);
  assert.equal(ids.has(5), true, 'the set given sees them too');
  busy.delete(3);
  assert.equal(busy.has(3), false);
  assert.equal(busy.size, 1);
});

test("files in progress: a file is sent here for another node's reader by one pass at a time", async () => {
  const busy = new FilesInProgress();
  busy.add(3);
  assert.equal(busy.help(3), undefined, 'a file processed here is not helped');
  const over = busy.help(5)!;
  assert.ok(over);
  assert.equal(busy.help(5), undefined, 'one pass at a time');
  let waited = false;
  const processing = busy.helpOver(5).then(() => (waited = true));
  await new Promise((resolve) => setImmediate(resolve));
  assert.equal(waited, false, 'processing the file waits for the pass');
  over();
  await processing;
  assert.ok(busy.help(5), 'helped again once the pass is over');
});
