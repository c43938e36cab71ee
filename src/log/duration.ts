// Durations as people read them, in logs and reports.

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
