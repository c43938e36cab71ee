// The sending window: its hours as written, whether a moment is inside them in the window's zone,
// and the gate requests wait at (one "closed" and one "open" message however many requests wait).
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parseWindowHours } from '../../src/config/settings/windows.js';
import { msUntilOpen, SendWindow, type WindowClosed } from '../../src/send/window.js';

const SHANGHAI = 'Asia/Shanghai'; // UTC+8, no daylight saving
/** A moment given as Shanghai wall-clock time on 2026-11-22. */
const shanghai = (hhmmss: string, ms = 0) => Date.parse(`2026-11-22T${hhmmss}+08:00`) + ms;
const MIN = 60_000;
const HOUR = 60 * MIN;

describe('sending window hours', () => {
  it('reads HH:MM-HH:MM, end 24:00 allowed, and says what is wrong otherwise', () => {
    assert.deepEqual(parseWindowHours('08:00-22:00'), { start: 480, end: 1320 });
    assert.deepEqual(parseWindowHours(' 22:30-06:15 '), { start: 1350, end: 375 });
    assert.deepEqual(parseWindowHours('09:00-24:00'), { start: 540, end: 1440 });
    for (const bad of [
      '8-22',
      '08:00',
      '8:00-22:00',
      '24:00-06:00',
      '08:60-22:00',
      '08:00-24:01',
      '08:00 - 22:00',
    ]) {
      assert.match(parseWindowHours(bad) as string, /expected/, bad);
    }
    assert.match(parseWindowHours('08:00-08:00') as string, /shorter than a day/);
    assert.match(parseWindowHours('00:00-24:00') as string, /shorter than a day/);
  });

  it('is open from its start (inclusive) to its end (exclusive), by the clock of its zone', () => {
    const day = parseWindowHours('08:00-22:00') as { start: number; end: number };
    assert.equal(msUntilOpen(day, SHANGHAI, shanghai('08:00:00')), 0);
    assert.equal(msUntilOpen(day, SHANGHAI, shanghai('21:59:59', 999)), 0);
    assert.equal(msUntilOpen(day, SHANGHAI, shanghai('22:00:00')), 10 * HOUR);
    assert.equal(msUntilOpen(day, SHANGHAI, shanghai('07:59:59', 500)), 500);
    assert.equal(msUntilOpen(day, SHANGHAI, shanghai('03:30:00')), 4 * HOUR + 30 * MIN);
    // 12:00 in Shanghai is 04:00 UTC: closed there, 4 h before 08:00 UTC.
    assert.equal(msUntilOpen(day, 'UTC', shanghai('12:00:00')), 4 * HOUR);
  });

  it('spans midnight when its end is before its start', () => {
    const night = parseWindowHours('22:00-06:00') as { start: number; end: number };
    assert.equal(msUntilOpen(night, SHANGHAI, shanghai('23:00:00')), 0);
    assert.equal(msUntilOpen(night, SHANGHAI, shanghai('05:59:00')), 0);
    assert.equal(msUntilOpen(night, SHANGHAI, shanghai('06:00:00')), 16 * HOUR);
    assert.equal(msUntilOpen(night, SHANGHAI, shanghai('21:00:00')), HOUR);
  });
});

describe('the sending window gate', () => {
  /** A clock that starts at `start` (ms since epoch) and runs at real speed. */
  const clockFrom = (start: number) => {
    const offset = start - Date.now();
    return () => Date.now() + offset;
  };

  it('lets requests through at once when open, without a word', async () => {
    const said: string[] = [];
    const gate = new SendWindow(
      { start: 480, end: 1320 },
      SHANGHAI,
      { onClosed: () => said.push('closed'), onOpened: () => said.push('open') },
      clockFrom(shanghai('12:00:00')),
    );
    assert.equal(await gate.waitOpen(), true);
    assert.deepEqual(said, []);
    assert.equal(gate.text, '08:00-22:00 Asia/Shanghai');
  });

  it('holds every request until it opens, saying once that it is closed and once that it is open', async () => {
    const closed: WindowClosed[] = [];
    let opened = 0;
    const now = clockFrom(shanghai('07:59:59', 700)); // 300 ms before 08:00
    const gate = new SendWindow(
      { start: 480, end: 1320 },
      SHANGHAI,
      { onClosed: (c) => closed.push(c), onOpened: () => opened++ },
      now,
    );
    const waits = Array.from({ length: 5 }, () => gate.waitOpen());
    assert.equal(closed.length, 1);
    assert.equal(closed[0]!.window, '08:00-22:00 Asia/Shanghai');
    assert.equal(closed[0]!.opensAt, '2026-11-22T00:00:00.000Z');
    assert.ok(closed[0]!.opensInMs > 0 && closed[0]!.opensInMs <= 300);
    assert.equal(opened, 0);
    assert.deepEqual(await Promise.all(waits), [true, true, true, true, true]);
    assert.ok(now() >= shanghai('08:00:00'), 'released only once 08:00 had come');
    assert.equal(opened, 1);
    assert.equal(closed.length, 1);
  });

  it('stops waiting, answering false, when the stop signal comes', async () => {
    let opened = 0;
    const gate = new SendWindow(
      { start: 480, end: 1320 },
      SHANGHAI,
      { onOpened: () => opened++ },
      clockFrom(shanghai('23:00:00')),
    );
    const stop = new AbortController();
    const wait = gate.waitOpen(stop.signal);
    stop.abort();
    assert.equal(await wait, false);
    assert.equal(await gate.waitOpen(stop.signal), false);
    assert.equal(opened, 0, 'it did not open');
  });
});
