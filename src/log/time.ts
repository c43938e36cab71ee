// Moments as people read them: the journal keeps UTC (ISO 8601), and what a person reads shows
// the configured zone (SMSDROP_TIMEZONE, or the host's when unset), without the T, the
// milliseconds and the Z that make an ISO time hard to read at a glance. JSON and CSV output keep
// the journal's UTC: machines read those.

const wallClocks = new Map<string, Intl.DateTimeFormat>();

/**
 * A formatter of a moment's wall-clock fields (year to second, 00-23 hours) in `zone` (the host's
 * when undefined), made once per zone: building one costs more than formatting with it, and the
 * signer formats a timestamp per request.
 */
export function wallClockFormatter(zone: string | undefined): Intl.DateTimeFormat {
  const key = zone ?? '';
  let f = wallClocks.get(key);
  if (!f) {
    // hourCycle h23: 00..23 ('h24' would print midnight as 24).
    const fields = {
      year: 'numeric',
      month: '2-digit',
      day: '2-digit',
      hour: '2-digit',
      minute: '2-digit',
      second: '2-digit',
    } as const;
    wallClocks.set(
      key,
      (f = new Intl.DateTimeFormat('en-GB', { timeZone: zone, hourCycle: 'h23', ...fields })),
    );
  }
  return f;
}

/** "2026-11-25 17:12:03" (or "2026-11-25 17:12" with minutes) in `zone`; '-' for none. */
export function formatMoment(
  iso: string | null | undefined,
  zone: string | undefined,
  precision: 'seconds' | 'minutes' = 'seconds',
): string {
  if (!iso) return '-';
  const date = new Date(iso);
  if (Number.isNaN(date.getTime())) return iso;
  const parts = Object.fromEntries(
    wallClockFormatter(zone)
      .formatToParts(date)
      .map((p) => [p.type, p.value]),
  );
  const day = `${parts.year}-${parts.month}-${parts.day} ${parts.hour}:${parts.minute}`;
  return precision === 'minutes' ? day : `${day}:${parts.second}`;
}

/** The zone times are shown in, named: the configured one, or the host's. */
export function zoneName(zone: string | undefined): string {
  return zone ?? Intl.DateTimeFormat().resolvedOptions().timeZone;
}

const WALL_TIME = /^(\d{4})-(\d{2})-(\d{2})[T ](\d{2}):(\d{2})(?::(\d{2}))?$/;
const WITH_OFFSET = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:?\d{2})$/i;

/**
 * A moment a person wrote: ISO 8601 with its offset ("2026-12-07T09:00+08:00", "…Z"), or a wall
 * time ("2026-12-07 09:00") in `zone` (the host's when undefined). Undefined: neither.
 */
export function parseMoment(text: string, zone: string | undefined): Date | undefined {
  const t = text.trim();
  if (WITH_OFFSET.test(t)) {
    const at = new Date(t);
    return Number.isNaN(at.getTime()) ? undefined : at;
  }
  const m = WALL_TIME.exec(t);
  if (!m) return undefined;
  const [y, mo, d, h, mi, s] = m.slice(1).map((v) => Number(v ?? 0));
  const asUtc = Date.UTC(y!, mo! - 1, d, h, mi, s);
  // The zone's offset at that moment, found from the guess and checked once more (a DST change).
  let at = asUtc - offsetAt(asUtc, zone);
  at = asUtc - offsetAt(at, zone);
  const back = formatMoment(new Date(at).toISOString(), zone);
  const wrote = `${m[1]}-${m[2]}-${m[3]} ${m[4]}:${m[5]}:${m[6] ?? '00'}`;
  return back === wrote ? new Date(at) : undefined; // a wall time the zone skips
}

/** How far `zone`'s wall clock is ahead of UTC at the moment `ms` (ms). */
function offsetAt(ms: number, zone: string | undefined): number {
  const parts = Object.fromEntries(
    wallClockFormatter(zone)
      .formatToParts(new Date(ms))
      .map((p) => [p.type, Number(p.value)]),
  );
  const wall = Date.UTC(
    parts.year!,
    parts.month! - 1,
    parts.day,
    parts.hour,
    parts.minute,
    parts.second,
  );
  return wall - Math.floor(ms / 1000) * 1000;
}
