// Many requests wait on one stop signal at once (behind the rate limit, in a window, for a slot):
// the signal gets one listener whatever their number, and none is left once they are over (Node
// takes an eleventh listener for a leak: MaxListenersExceededWarning).
import assert from 'node:assert/strict';
import { getEventListeners } from 'node:events';
import { test } from 'node:test';
import { untilAborted } from '../../src/send/rate.js';
import { sleepUnlessStopped } from '../../src/send/sleep.js';

const listeners = (signal: AbortSignal) => getEventListeners(signal, 'abort').length;

test('sleeps on one signal: one listener, and all end at its abort', async () => {
  const stop = new AbortController();
  const sleeps = Array.from({ length: 30 }, () => sleepUnlessStopped(600_000, stop.signal));
  assert.equal(listeners(stop.signal), 1);
  stop.abort();
  await Promise.all(sleeps);
  assert.equal(listeners(stop.signal), 0);
});

test('sleeps that end by their time leave no listener behind them', async () => {
  const stop = new AbortController();
  for (let round = 0; round < 30; round++) await sleepUnlessStopped(1, stop.signal);
  await Promise.all(Array.from({ length: 30 }, () => sleepUnlessStopped(1, stop.signal)));
  assert.ok(listeners(stop.signal) <= 1);
  assert.equal(stop.signal.aborted, false);
});

test('turns waited on one signal: one listener; a stop ends each, a turn given ends its own', async () => {
  const stop = new AbortController();
  const given: Array<() => void> = [];
  const turns = Array.from({ length: 30 }, () =>
    untilAborted(
      new Promise((resolve) => given.push(() => resolve({ giveBack: () => {} } as never))),
      stop.signal,
    ),
  );
  assert.equal(listeners(stop.signal), 1);
  given[0]!();
  assert.ok(await turns[0]);
  stop.abort();
  const rest = await Promise.all(turns.slice(1));
  assert.ok(rest.every((t) => t === undefined));
  assert.equal(listeners(stop.signal), 0);
});
