// The sending window (quiet hours): the hours of the recipients' day in which requests may start,
// e.g. 08:00-22:00 in Asia/Shanghai, where providers advise against bulk sending at night and may
// hold late sends until morning. Outside it no request starts; reading files in, the journal and
// the answers to requests already in flight go on, and every row stays pending until the window
// opens. Nothing else changes: a request that was due simply starts later.
import { MINUTES_PER_DAY, type WindowHours } from '../config/settings/windows.js';
import { sleepUnlessStopped } from './sleep.js';

/** How long one wait sleeps before it looks at the clock again (clock changes, DST, a stop). */
const LOOK_AGAIN_MS = 60_000;

function hhmm(minutes: number): string {
  return `${String(Math.floor(minutes / 60)).padStart(2, '0')}:${String(minutes % 60).padStart(2, '0')}`;
}

const clockFormatters = new Map<string, Intl.DateTimeFormat>();

/** Milliseconds after the local midnight of `zone` at `now`. */
function timeOfDayMs(now: number, zone: string): number {
  // Building an Intl.DateTimeFormat is costly, and every request looks at the clock: one per zone.
  let clock = clockFormatters.get(zone);
  if (!clock)
    clockFormatters.set(
      zone,
      (clock = new Intl.DateTimeFormat('en-GB', {
        timeZone: zone,
        hourCycle: 'h23',
        hour: '2-digit',
        minute: '2-digit',
        second: '2-digit',
      })),
    );
  const parts = clock.formatToParts(now);
  const part = (type: string) => Number(parts.find((p) => p.type === type)!.value);
  return ((part('hour') * 60 + part('minute')) * 60 + part('second')) * 1000 + (now % 1000);
}

/** How long the window stays closed each day (22:00-06:00 is open 8 h: closed 16 h). */
export function closedMsPerDay(hours: WindowHours): number {
  const openMinutes = (hours.end - hours.start + MINUTES_PER_DAY) % MINUTES_PER_DAY;
  return (MINUTES_PER_DAY - openMinutes) * 60_000;
}

/**
 * 0 when `now` is inside the window; otherwise how long until it opens (by the zone's clock at
 * `now`).
 */
export function msUntilOpen(hours: WindowHours, zone: string, now: number): number {
  const day = MINUTES_PER_DAY * 60_000;
  const t = timeOfDayMs(now, zone);
  const start = hours.start * 60_000;
  const end = hours.end * 60_000;
  const inside = start < end ? t >= start && t < end : t >= start || t < end;
  return inside ? 0 : (start - t + day) % day;
}

export interface WindowClosed {
  /** The window as configured, e.g. "08:00-22:00 Asia/Shanghai". */
  window: string;
  /** When it opens, as an ISO time. */
  opensAt: string;
  opensInMs: number;
}

export interface SendWindowEvents {
  /** Once each time requests start waiting for the window. */
  onClosed?(closed: WindowClosed): void;
  /** Once each time it opens again after requests waited. */
  onOpened?(): void;
}

/** The gate every request passes before it starts (shared by every file of the process). */
export class SendWindow {
  #waiting = 0;
  #closedSaid = false;

  constructor(
    readonly hours: WindowHours,
    readonly zone: string,
    private readonly events: SendWindowEvents = {},
    private readonly now: () => number = Date.now,
  ) {}

  /** "08:00-22:00 Asia/Shanghai" */
  get text(): string {
    return `${hhmm(this.hours.start)}-${hhmm(this.hours.end)} ${this.zone}`;
  }

  /** "08:00 Asia/Shanghai" */
  get opening(): string {
    return `${hhmm(this.hours.start)} ${this.zone}`;
  }

  /** 0 when the window is open at `now`; otherwise how long until it opens. */
  opensInMs(now: number = this.now()): number {
    return msUntilOpen(this.hours, this.zone, now);
  }

  /**
   * Resolves true once the window is open, at once if it is; false if `signal` stopped the wait.
   */
  async waitOpen(signal?: AbortSignal): Promise<boolean> {
    const now = this.now();
    let wait = this.opensInMs(now);
    if (wait === 0) return !signal?.aborted;
    this.#waiting++;
    try {
      if (!this.#closedSaid) {
        this.#closedSaid = true;
        this.events.onClosed?.({
          window: this.text,
          opensAt: new Date(now + wait).toISOString(),
          opensInMs: wait,
        });
      }
      while (wait > 0) {
        if (signal?.aborted) return false;
        await sleepUnlessStopped(Math.min(wait, LOOK_AGAIN_MS), signal);
        wait = this.opensInMs();
      }
      return !signal?.aborted;
    } finally {
      // The last waiter to leave an open window says so, once.
      if (--this.#waiting === 0 && this.#closedSaid && this.opensInMs() === 0) {
        this.#closedSaid = false;
        this.events.onOpened?.();
      }
    }
  }
}
