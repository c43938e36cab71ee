// Many requests wait on one stop signal at once (behind the rate limit, in a window): each wait's
// listener is taken off when it ends, by its time or by the stop, so none is left once they are
// over; and a signal its owner marks for many waits (manyWaitsOn, as the runtime's and each file's
// are) carries them without Node's leak warning (MaxListenersExceededWarning at the eleventh).
import assert from 'node:assert/strict';
import { getEventListeners } from 'node:events';
import { test } from 'node:test';
import { untilAborted } from '../../src/send/rate.js';
import { manyWaitsOn, sleepUnlessStopped } from '../../src/send/sleep.js';

const listeners = (signal: AbortSignal) => getEventListeners(signal, 'abort').length;

/** Node's leak warnings while `run` runs, and a tick after it. */
async function warningsOf(run: () => Promise<void>): Promise<string[]> {
  const warnings: string[] = [];
  const onWarning = (w: Error) => {
    if (w.name === 'MaxListenersExceededWarning') warnings.push(w.message);
  };
  process.on('warning', onWarning);
  try {
    await run();
    await new Promise((resolve) => setImmediate(resolve));
  } finally {
    process.off('warning', onWarning);
  }
  return warnings;
}

test('sleeps on one signal marked for many waits: no warning, and all end at its abort', async () => {
  const stop = new AbortController();
  const warnings = await warningsOf(async () => {
    const sleeps = Array.from({ length: 30 }, () =>
      sleepUnlessStopped(600_000, manyWaitsOn(stop.signal)),
    );
    assert.equal(listeners(stop.signal), 30);
    stop.abort();
    await Promise.all(sleeps);
  });
  assert.equal(listeners(stop.signal), 0);
  assert.deepEqual(warnings, []);
});

test('sleeps that end by their time leave no listener behind them', async () => {
  const stop = new AbortController();
  for (let round = 0; round < 30; round++) await sleepUnlessStopped(1, stop.signal);
  await Promise.all(Array.from({ length: 30 }, () => sleepUnlessStopped(1, stop.signal)));
  assert.equal(listeners(stop.signal), 0);
  assert.equal(stop.signal.aborted, false);
});

test('turns waited on one signal: a stop ends each, a turn given ends its own and its listener', async () => {
  const stop = new AbortController();
  manyWaitsOn(stop.signal);
  const given: Array<() => void> = [];
  const turns = Array.from({ length: 30 }, () =>
    untilAborted(
      new Promise((resolve) => given.push(() => resolve({ giveBack: () => {} } as never))),
      stop.signal,
    ),
  );
  assert.equal(listeners(stop.signal), 30);
  given[0]!();
  assert.ok(await turns[0]);
  assert.equal(listeners(stop.signal), 29);
  stop.abort();
  const rest = await Promise.all(turns.slice(1));
  assert.ok(rest.every((t) => t === undefined));
  assert.equal(listeners(stop.signal), 0);
});
