// Durations as people read them, in logs and reports, and as they write them in settings.

/** Milliseconds per unit of a duration written in a setting ("10m", "24h", "10000/1h"). */
export const UNIT_MS = { s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000 } as const;
export type DurationUnit = keyof typeof UNIT_MS;

/** `amount` of `unit` (as written: "1.5", "h") in whole milliseconds. */
export function durationMs(amount: string, unit: DurationUnit): number {
  return Math.round(Number(amount) * UNIT_MS[unit]);
}

/** A duration as a setting writes it ("24h", "1.5d"), or off (0 ms). */
export interface WrittenDuration {
  ms: number;
  /** As written, lower case and without spaces ("24h"), or "off". */
  text: string;
}

const DURATION_TEXT = /^(\d+(?:\.\d+)?)\s*(s|m|h|d)$/;

/**
 * "24h", "7d", "90m", "2s" (s, m, h or d), or "off" / "0": the duration, or undefined when the
 * text is none of them. Each setting then applies its own bounds and says them.
 */
export function parseDurationOrOff(text: string): WrittenDuration | undefined {
  const t = text.trim().toLowerCase();
  if (t === 'off' || t === '0') return { ms: 0, text: 'off' };
  const m = DURATION_TEXT.exec(t);
  if (!m) return undefined;
  return { ms: durationMs(m[1]!, m[2] as DurationUnit), text: `${m[1]}${m[2]}` };
}

/** Seconds as "2 h 5 min", "3 min 20 s" or "12 s". */
export function formatDuration(seconds: number): string {
  const s = Math.round(seconds);
  if (s >= 3600) {
    const minutes = Math.round(s / 60); // 7,199 s is "2 h 0 min", not "1 h 60 min"
    return `${Math.floor(minutes / 60)} h ${minutes % 60} min`;
  }
  if (s >= 60) return `${Math.floor(s / 60)} min ${s % 60} s`;
  return `${s} s`;
}

/** Bytes as "512 B", "4.0 KB", "12.3 MB" or "1.20 GB" (powers of 1024). */
export function formatBytes(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  const units = ['KB', 'MB', 'GB', 'TB'];
  let value = bytes / 1024;
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit++;
  }
  return `${value.toFixed(value >= 100 ? 0 : 1)} ${units[unit]}`;
}
