// The pacing limits (send/rate.ts): the message window on a clock the test moves, the per-second
// pacing on the real one (only "it waited at least this long" is asserted: never an upper bound).
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { createRateLimiter, type MessageWindow, parseMessageWindow, type StartTicket } from '../../src/send/rate.js';

function windowOf(text: string): MessageWindow {
  const window = parseMessageWindow(text);
  assert.equal(typeof window, 'object', String(window));
  return window as MessageWindow;
}

/** Resolves to 'waiting' if the promise is still pending after a few turns of the event loop. */
async function settledSoon<T>(promise: Promise<T>): Promise<T | 'waiting'> {
  return Promise.race([promise, new Promise<'waiting'>((resolve) => setTimeout(() => resolve('waiting'), 50))]);
}

describe('message window: N/DURATION', () => {
  it('reads counts per second, minute, hour and day', () => {
    assert.deepEqual(parseMessageWindow('10000/1h'), { messages: 10000, ms: 3_600_000, text: '10000/1h' });
    assert.deepEqual(parseMessageWindow(' 500 / 10m '), { messages: 500, ms: 600_000, text: '500/10m' });
    assert.deepEqual(parseMessageWindow('100000/d'), { messages: 100000, ms: 86_400_000, text: '100000/d' });
    assert.deepEqual(parseMessageWindow('300/1.5S'), { messages: 300, ms: 1_500, text: '300/1.5s' });
  });

  it('says what is wrong with anything else', () => {
    assert.match(String(parseMessageWindow('10000')), /expected N\/DURATION/);
    assert.match(String(parseMessageWindow('10000 per hour')), /expected N\/DURATION/);
    assert.match(String(parseMessageWindow('-5/1h')), /expected N\/DURATION/);
    assert.match(String(parseMessageWindow('0/1h')), /at least 1 number/);
    assert.match(String(parseMessageWindow('100/0.5s')), /at least 1 s/);
    assert.match(String(parseMessageWindow('100/8d')), /at most 7 days/);
  });
});

describe('message window: at most N numbers in any span', () => {
  it('holds the request that would pass N until the oldest start leaves the window, and says so once', async () => {
    let now = 1_000_000;
    const held: { resumesAt: string; waitMs: number }[] = [];
    const limiter = createRateLimiter({ messageWindow: windowOf('500/1h'), now: () => now, onWindowFull: (e) => held.push(e) });
    assert.ok(await limiter.take(200));
    now += 60_000;
    assert.ok(await limiter.take(200));
    const third = limiter.take(200);
    const fourth = limiter.take(100); // would fit, but waits its turn behind the third
    assert.equal(await settledSoon(third), 'waiting');
    assert.equal(await settledSoon(fourth), 'waiting');
    assert.deepEqual(held, [{ window: '500/1h', resumesAt: new Date(1_000_000 + 3_600_000).toISOString(), waitMs: 3_600_000 - 60_000 }]);
    now = 1_000_000 + 3_600_000; // the first start is exactly one window old: out of it
    assert.ok(await third);
    assert.ok(await fourth); // 200 + 200 + 100 = 500 in the window: allowed
    const stop = new AbortController(); // (a waiter left waiting would keep the test process alive)
    const fifth = limiter.take(1, stop.signal);
    assert.equal(await settledSoon(fifth), 'waiting');
    assert.equal(held.length, 2, 'a new hold is said again');
    stop.abort();
    assert.equal(await fifth, undefined);
  });

  it('a request the provider cannot have sent gives its numbers back', async () => {
    const now = 5_000_000;
    const limiter = createRateLimiter({ messageWindow: windowOf('400/1h'), now: () => now });
    const first = (await limiter.take(200)) as StartTicket;
    assert.ok(await limiter.take(200));
    const third = limiter.take(200);
    assert.equal(await settledSoon(third), 'waiting');
    first.giveBack();
    assert.ok(await third, 'let through once the window looks again');
  });

  it('counts the starts made before this process (the journal)', async () => {
    const now = 9_000_000;
    const limiter = createRateLimiter({
      messageWindow: windowOf('400/1h'),
      startedBefore: [{ at: now - 10 * 60_000, numbers: 200 }, { at: now - 5 * 60_000, numbers: 150 }, { at: now - 2 * 3_600_000, numbers: 200 }],
      now: () => now,
    });
    assert.ok(await limiter.take(50));
    const stop = new AbortController();
    const next = limiter.take(1, stop.signal);
    assert.equal(await settledSoon(next), 'waiting');
    stop.abort();
    assert.equal(await next, undefined);
  });

  it('a stop ends the wait: the request does not start', async () => {
    const limiter = createRateLimiter({ messageWindow: windowOf('200/1h'), now: () => 0 });
    assert.ok(await limiter.take(200));
    const stop = new AbortController();
    const waiting = limiter.take(10, stop.signal);
    assert.equal(await settledSoon(waiting), 'waiting');
    stop.abort();
    assert.equal(await waiting, undefined);
  });
});

describe('per-second pacing', () => {
  it('messagesPerSecond: a request of n numbers delays the next by n / rate seconds', async () => {
    const limiter = createRateLimiter({ messagesPerSecond: 1000 });
    const t0 = performance.now();
    await limiter.take(200);
    await limiter.take(200);
    await limiter.take(1);
    assert.ok(performance.now() - t0 >= 390, 'two requests of 200 at 1000 numbers/s take 0.4 s to pass');
  });

  it('requestsPerSecond counts requests, whatever their size', async () => {
    const limiter = createRateLimiter({ requestsPerSecond: 20 });
    const t0 = performance.now();
    for (let i = 0; i < 5; i++) await limiter.take(200);
    assert.ok(performance.now() - t0 >= 190, 'five requests at 20/s: four spacings of 50 ms');
  });

  it('no limit: every request starts at once', async () => {
    const limiter = createRateLimiter();
    for (let i = 0; i < 1000; i++) assert.ok(await limiter.take(200));
  });
});
