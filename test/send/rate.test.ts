// The pacing limits (send/rate.ts): the message window on a clock the test moves, the per-second
// pacing on the real one (only "it waited at least this long" is asserted: never an upper bound),
// and the message window with the sending window in the sender (send/index.ts).
import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, it } from 'node:test';
import pLimit from 'p-limit';
import { loadConfig } from '../../src/config/index.js';
import { openWriter } from '../../src/journals/index.js';
import { createRowWriter } from '../../src/plan/rowWriter.js';
import type { ProviderClient } from '../../src/provider/client.js';
import { sendFile } from '../../src/send/index.js';
import {
  type MessageWindow,
  parseMessageWindow,
  parseWindowHours,
  type WindowHours,
} from '../../src/config/settings/windows.js';
import {
  AccountPause,
  createRateLimiter,
  type RateLimiter,
  type StartTicket,
} from '../../src/send/rate.js';
import { SendWindow } from '../../src/send/window.js';

function windowOf(text: string): MessageWindow {
  const window = parseMessageWindow(text);
  if (typeof window === 'string') assert.fail(window);
  return window;
}

/** What parseMessageWindow says is wrong with `text`; fails if it takes the text. */
function refusalOf(text: string): string {
  const window = parseMessageWindow(text);
  if (typeof window !== 'string') assert.fail(`${text} was taken: ${JSON.stringify(window)}`);
  return window;
}

/** Resolves to 'waiting' if the promise is still pending after a few turns of the event loop. */
async function settledSoon<T>(promise: Promise<T>): Promise<T | 'waiting'> {
  return Promise.race([
    promise,
    new Promise<'waiting'>((resolve) => setTimeout(() => resolve('waiting'), 50)),
  ]);
}

/**
 * A take that is still waiting; stop() aborts it and checks that the request did not start (a
 * waiter left waiting would also keep the test process alive).
 */
async function waitingTake(
  limiter: RateLimiter,
  numbers: number,
): Promise<{ stop(): Promise<void> }> {
  const stop = new AbortController();
  const take = limiter.take(numbers, stop.signal);
  assert.equal(await settledSoon(take), 'waiting');
  return {
    stop: async () => {
      stop.abort();
      assert.equal(await take, undefined);
    },
  };
}

describe('message window: N/DURATION', () => {
  it('reads counts per second, minute, hour and day', () => {
    assert.deepEqual(parseMessageWindow('10000/1h'), {
      messages: 10000,
      ms: 3_600_000,
      text: '10000/1h',
    });
    assert.deepEqual(parseMessageWindow(' 500 / 10m '), {
      messages: 500,
      ms: 600_000,
      text: '500/10m',
    });
    assert.deepEqual(parseMessageWindow('100000/d'), {
      messages: 100000,
      ms: 86_400_000,
      text: '100000/d',
    });
    assert.deepEqual(parseMessageWindow('300/1.5S'), {
      messages: 300,
      ms: 1_500,
      text: '300/1.5s',
    });
  });

  it('says what is wrong with anything else', () => {
    assert.match(refusalOf('10000'), /expected N\/DURATION/);
    assert.match(refusalOf('10000 per hour'), /expected N\/DURATION/);
    assert.match(refusalOf('-5/1h'), /expected N\/DURATION/);
    assert.match(refusalOf('0/1h'), /at least 1 number/);
    assert.match(refusalOf('100/0.5s'), /at least 1 s/);
    assert.match(refusalOf('100/8d'), /at most 7 days/);
  });
});

describe('message window: at most N numbers in any span', () => {
  it('holds the request that would pass N until the oldest start leaves the window, and says so once', async () => {
    let now = 1_000_000;
    const held: { resumesAt: string; waitMs: number }[] = [];
    let room = 0;
    const limiter = createRateLimiter({
      messageWindow: windowOf('500/1h'),
      now: () => now,
      onWindowFull: (e) => held.push(e),
      onWindowRoom: () => room++,
    });
    assert.ok(await limiter.take(200));
    now += 60_000;
    assert.ok(await limiter.take(200));
    const third = limiter.take(200);
    const fourth = limiter.take(100); // would fit, but waits its turn behind the third
    assert.equal(await settledSoon(third), 'waiting');
    assert.equal(await settledSoon(fourth), 'waiting');
    assert.deepEqual(held, [
      {
        window: '500/1h',
        resumesAt: new Date(1_000_000 + 3_600_000).toISOString(),
        waitMs: 3_600_000 - 60_000,
      },
    ]);
    now = 1_000_000 + 3_600_000; // the first start is exactly one window old: out of it
    assert.equal(room, 0);
    assert.ok(await third);
    assert.equal(room, 1, 'the end of the hold is told (smsdrop status stops saying WAITING)');
    assert.ok(await fourth); // 200 + 200 + 100 = 500 in the window: allowed
    const fifth = await waitingTake(limiter, 1);
    assert.equal(held.length, 2, 'a new hold is said again');
    await fifth.stop();
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
      startedBefore: [
        { at: now - 10 * 60_000, numbers: 200 },
        { at: now - 5 * 60_000, numbers: 150 },
        { at: now - 2 * 3_600_000, numbers: 200 },
      ],
      now: () => now,
    });
    assert.ok(await limiter.take(50));
    await (await waitingTake(limiter, 1)).stop();
  });

  it('counts the starts a journal gives later (a promise): no request goes before they are known', async () => {
    const now = 9_000_000;
    let give: (starts: { at: number; numbers: number }[]) => void = () => {};
    const limiter = createRateLimiter({
      messageWindow: windowOf('400/1h'),
      startedBefore: new Promise((resolve) => (give = resolve)),
      now: () => now,
    });
    const first = limiter.take(50);
    assert.equal(await settledSoon(first), 'waiting', 'held until the journal has answered');
    give([{ at: now - 60_000, numbers: 350 }]);
    assert.ok(await first);
    await (await waitingTake(limiter, 1)).stop();
  });

  it('a stop ends the wait: the request does not start, and the hold is over (status stops saying WAITING)', async () => {
    const told: string[] = [];
    const limiter = createRateLimiter({
      messageWindow: windowOf('200/1h'),
      now: () => 0,
      onWindowFull: () => told.push('full'),
      onWindowRoom: () => told.push('room'),
    });
    assert.ok(await limiter.take(200));
    await (await waitingTake(limiter, 10)).stop();
    await settledSoon(new Promise(() => {})); // (the stop also ends the waiter's sleep)
    assert.deepEqual(told, ['full', 'room']);
    const next = await waitingTake(limiter, 10);
    assert.deepEqual(told, ['full', 'room', 'full'], 'a new hold is said again');
    await next.stop();
  });
});

describe('message window: stops', () => {
  it('a request stopped while paced per second gives its numbers back to the window', async () => {
    const held: unknown[] = [];
    const limiter = createRateLimiter({
      messageWindow: windowOf('400/1h'),
      messagesPerSecond: 100,
      now: () => 0,
      onWindowFull: (e) => held.push(e),
    });
    assert.ok(await limiter.take(200)); // the next request may start 2 s later
    await (await waitingTake(limiter, 200)).stop(); // in the window, waiting for its second
    // The window has room for it: only the pacing holds it.
    const next = await waitingTake(limiter, 200);
    assert.deepEqual(held, [], 'the window was never full');
    await next.stop();
  });

  it('a waiter queued behind another stops at once when its own signal aborts', async () => {
    const limiter = createRateLimiter({ messageWindow: windowOf('200/1h'), now: () => 0 });
    assert.ok(await limiter.take(200));
    const front = new AbortController();
    const first = limiter.take(200, front.signal); // held for the hour
    const mine = new AbortController();
    const second = limiter.take(10, mine.signal); // queued behind it
    assert.equal(await settledSoon(second), 'waiting');
    mine.abort();
    assert.equal(await settledSoon(second), undefined, 'not held behind the other waiter');
    front.abort();
    assert.equal(await first, undefined);
  });
});

describe('per-second pacing', () => {
  it('messagesPerSecond: a request of n numbers delays the next by n / rate seconds', async () => {
    const limiter = createRateLimiter({ messagesPerSecond: 1000 });
    const t0 = performance.now();
    await limiter.take(200);
    await limiter.take(200);
    await limiter.take(1);
    assert.ok(
      performance.now() - t0 >= 390,
      'two requests of 200 at 1000 numbers/s take 0.4 s to pass',
    );
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

describe('a message window and the sending window together', () => {
  it('a request the message window held until after the sending window closed waits for the sending window too', async () => {
    const { handle: journal } = await openWriter(
      { dataDir: mkdtempSync(path.join(os.tmpdir(), 'smsdrop-rate-window-')) },
      { role: 'rate test', synchronous: 'normal', reqIdOn: false, onLost: () => {} },
    );
    const file = await journal.files.create({
      sha256: 'w',
      name: 'w.csv',
      path: '/w.csv',
      size: 1,
      encoding: 'utf-8',
    });
    const writer = createRowWriter(journal.files.planStore(file.id), { maxPerRequest: 200 });
    await writer.write(
      Array.from({ length: 400 }, (_, i) => ({
        line: i + 2,
        phoneRaw: '',
        phone: `138${String(i).padStart(8, '0')}`,
        appId: 'app',
        templateId: '1',
        datas: ['v'],
        extras: [],
      })),
    );
    await writer.finish();
    let clock = Date.parse('2026-11-25T21:30:00Z'); // the sending window 08:00-22:00 UTC is open
    let sent = 0;
    const client: ProviderClient = {
      send: () => {
        sent++;
        return Promise.resolve({
          kind: 'accepted',
          statusCode: '000000',
          smsMessageSid: 'sid',
          dateCreated: '20261125213000',
        });
      },
      close: async () => {},
    };
    let held!: () => void;
    const messageWindowFull = new Promise<void>((resolve) => (held = resolve));
    let closed!: () => void;
    const sendingWindowClosed = new Promise<void>((resolve) => (closed = resolve));
    const window = new SendWindow(
      parseWindowHours('08:00-22:00') as WindowHours,
      'UTC',
      { onClosed: () => closed() },
      () => clock,
    );
    const rateLimiter = createRateLimiter({
      messageWindow: windowOf('200/1h'),
      now: () => clock,
      onWindowFull: () => held(),
    });
    const config = loadConfig({
      configDir: mkdtempSync(path.join(os.tmpdir(), 'smsdrop-cfg-')),
      env: {},
    });
    const stop = new AbortController();
    const sending = sendFile(
      {
        send: journal.send,
        client,
        config,
        limit: pLimit(2),
        rateLimiter,
        pause: new AccountPause(),
        window,
        stopSignal: stop.signal,
        now: () => clock,
      },
      file.id,
    );
    try {
      await messageWindowFull; // the second request waits for 22:30
      // the first one goes
      while (sent < 1) await new Promise((resolve) => setTimeout(resolve, 10));
      clock = Date.parse('2026-11-25T22:31:00Z'); // the message window has room again, but it is night
      // (sending ends first only if the request went)
      await Promise.race([sendingWindowClosed, sending]);
      assert.equal(sent, 1, 'nothing starts outside the sending window');
    } finally {
      stop.abort();
    }
    assert.deepEqual(await sending, { state: 'stopped' });
    assert.equal((await journal.files.counts(file.id)).pending, 200);
    await journal.close();
  });
});
