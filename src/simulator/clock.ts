// Reading and writing the provider's 14-digit timestamps (yyyyMMddHHmmss) in a chosen time zone.
// The real provider reads the caller's timestamp loosely (a UTC host signing local time passes), so
// the zone is the simulator's choice: default the host's local zone, like the client's default.

const formatters = new Map<string, Intl.DateTimeFormat>();

function formatterFor(timeZone: string | undefined): Intl.DateTimeFormat {
  const key = timeZone ?? '';
  let f = formatters.get(key);
  if (!f) {
    f = new Intl.DateTimeFormat('en-US', {
      timeZone,
      hourCycle: 'h23',
      year: 'numeric',
      month: '2-digit',
      day: '2-digit',
      hour: '2-digit',
      minute: '2-digit',
      second: '2-digit',
    });
    formatters.set(key, f);
  }
  return f;
}

/** [year, month, day, hour, minute, second] */
type WallFields = readonly [number, number, number, number, number, number];

function readWallFields(epochMs: number, timeZone: string | undefined): WallFields {
  const parts = formatterFor(timeZone).formatToParts(new Date(epochMs));
  const get = (type: string) => Number(parts.find((p) => p.type === type)?.value ?? NaN);
  return [get('year'), get('month'), get('day'), get('hour'), get('minute'), get('second')];
}

// formatToParts costs more than the rest of a request's checks together, and a request asks for
// three instants (the signed stamp twice, "now" once) that stay the same for a whole second. The
// fields depend only on the whole second (the format has no fraction), so they are kept per zone
// and second; the map is emptied when full, which bounds it without any bookkeeping per hit.
const MAX_REMEMBERED_SECONDS = 1024;
const wallFieldsSeen = new Map<string, Map<number, WallFields>>();

/** Wall-clock fields of an instant in the zone. */
function wallFields(epochMs: number, timeZone: string | undefined): WallFields {
  const key = timeZone ?? '';
  let seen = wallFieldsSeen.get(key);
  if (!seen) {
    seen = new Map();
    wallFieldsSeen.set(key, seen);
  }
  const second = Math.floor(epochMs / 1000);
  let fields = seen.get(second);
  if (!fields) {
    if (seen.size >= MAX_REMEMBERED_SECONDS) seen.clear();
    fields = readWallFields(second * 1000, timeZone);
    seen.set(second, fields);
  }
  return fields;
}

const pad = (n: number, width = 2) => String(n).padStart(width, '0');

/** yyyyMMddHHmmss of the instant, in the zone. */
export function formatStamp(at: Date, timeZone?: string): string {
  const [y, mo, d, h, mi, s] = wallFields(at.getTime(), timeZone);
  return `${pad(y, 4)}${pad(mo)}${pad(d)}${pad(h)}${pad(mi)}${pad(s)}`;
}

/** yyyyMMdd of the instant in the zone: the provider's "natural day" for reqId uniqueness. */
export function dayOf(at: Date, timeZone?: string): string {
  return formatStamp(at, timeZone).slice(0, 8);
}

function offsetAt(epochMs: number, timeZone: string | undefined): number {
  const [y, mo, d, h, mi, s] = wallFields(epochMs, timeZone);
  return Date.UTC(y, mo - 1, d, h, mi, s) - Math.floor(epochMs / 1000) * 1000;
}

/** The instant a yyyyMMddHHmmss wall time names in the zone, or undefined when it is no real time. */
export function parseStamp(stamp: string, timeZone?: string): number | undefined {
  const m = /^(\d{4})(\d{2})(\d{2})(\d{2})(\d{2})(\d{2})$/.exec(stamp);
  if (!m) return undefined;
  const [y, mo, d, h, mi, s] = m.slice(1).map(Number) as [number, number, number, number, number, number];
  const asUtc = Date.UTC(y, mo - 1, d, h, mi, s);
  const back = new Date(asUtc);
  // Date.UTC rolls 20240230 over to March: a round trip that changes a field means no such date.
  if (y < 1970 || back.getUTCMonth() !== mo - 1 || back.getUTCDate() !== d || h > 23 || mi > 59 || s > 59) {
    return undefined;
  }
  const first = asUtc - offsetAt(asUtc, timeZone);
  const second = asUtc - offsetAt(first, timeZone);
  return second;
}
