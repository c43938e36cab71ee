import { test } from 'node:test';
import assert from 'node:assert/strict';
import { IntakeTurns } from '../../src/pipeline/turns.js';
import { FilesInProgress } from '../../src/pipeline/inProgress.js';

test('intake turns: each waits until the one before has ended its turn', async () => {
  const turns = new IntakeTurns();
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
