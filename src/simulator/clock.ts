// Reading and writing the provider's 14-digit timestamps (yyyyMMddHHmmss) in a chosen time zone.
// The real provider reads the caller's timestamp loosely (a UTC host signing local time passes), so
// the zone is the simulator's choice: default the host's local zone, like the client's default.
import { remembering } from './memo.js';
import { wallClockFormatter } from '../log/time.js';

/** [year, month, day, hour, minute, second] */
type WallFields = readonly [number, number, number, number, number, number];

function readWallFields(epochMs: number, timeZone: string | undefined): WallFields {
  const parts = wallClockFormatter(timeZone).formatToParts(new Date(epochMs));
  const get = (type: string) => Number(parts.find((p) => p.type === type)?.value ?? NaN);
  return [get('year'), get('month'), get('day'), get('hour'), get('minute'), get('second')];
}

/**
 * fn with its results kept per zone and key (see remembering): formatToParts costs more than the
 * rest of a request's checks together, and the instants a request reads (its signed stamp,
 * "now") stay the same for a whole second of requests.
 */
function rememberedPerZone<K, V>(
  fn: (key: K, timeZone: string | undefined) => V,
  limit = 1024,
): (key: K, timeZone: string | undefined) => V {
  const zones = new Map<string, (key: K) => V>();
  return (key, timeZone) => {
    let inZone = zones.get(timeZone ?? '');
    if (!inZone) {
      inZone = remembering((k: K) => fn(k, timeZone), limit);
      zones.set(timeZone ?? '', inZone);
    }
    return inZone(key);
  };
}

/**
 * Wall-clock fields of a whole second since the epoch (the format has no fraction), in the zone.
 */
const wallFieldsOf = rememberedPerZone((second: number, timeZone) =>
  readWallFields(second * 1000, timeZone),
);

const pad = (n: number, width = 2) => String(n).padStart(width, '0');

function readStamp(second: number, timeZone: string | undefined): string {
  const [y, mo, d, h, mi, s] = wallFieldsOf(second, timeZone);
  return `${pad(y, 4)}${pad(mo)}${pad(d)}${pad(h)}${pad(mi)}${pad(s)}`;
}

const stampOf = rememberedPerZone(readStamp);

/** yyyyMMddHHmmss of the instant, in the zone. */
export function formatStamp(at: Date, timeZone?: string): string {
  return stampOf(Math.floor(at.getTime() / 1000), timeZone);
}

/** yyyyMMdd of the instant in the zone: the provider's "natural day" for reqId uniqueness. */
export function dayOf(at: Date, timeZone?: string): string {
  return formatStamp(at, timeZone).slice(0, 8);
}

function offsetAt(epochMs: number, timeZone: string | undefined): number {
  const second = Math.floor(epochMs / 1000);
  const [y, mo, d, h, mi, s] = wallFieldsOf(second, timeZone);
  return Date.UTC(y, mo - 1, d, h, mi, s) - second * 1000;
}

const STAMP = /^(\d{4})(\d{2})(\d{2})(\d{2})(\d{2})(\d{2})$/;

function readInstant(stamp: string, timeZone: string | undefined): number | undefined {
  const m = STAMP.exec(stamp);
  if (!m) return undefined;
  const [y, mo, d, h, mi, s] = m.slice(1).map(Number) as [
    number,
    number,
    number,
    number,
    number,
    number,
  ];
  const asUtc = Date.UTC(y, mo - 1, d, h, mi, s);
  const back = new Date(asUtc);
  // Date.UTC rolls 20240230 over to March: a round trip that changes a field means no such date.
  if (
    y < 1970 ||
    back.getUTCMonth() !== mo - 1 ||
    back.getUTCDate() !== d ||
    h > 23 ||
    mi > 59 ||
    s > 59
  ) {
    return undefined;
  }
  const first = asUtc - offsetAt(asUtc, timeZone);
  const second = asUtc - offsetAt(first, timeZone);
  return second;
}

const instantOf = rememberedPerZone(readInstant);

/**
 * The instant a yyyyMMddHHmmss wall time names in the zone, or undefined when it is no real time.
 */
export function parseStamp(stamp: string, timeZone?: string): number | undefined {
  return instantOf(stamp, timeZone);
}
