// Small bounded memos for the simulator's per-request work that repeats from one request to the
// next (a client signs once per second, so the stamp, the Authorization and the clock fields a
// request reads are nearly always those of the request before).

/**
 * fn with its results kept for the next calls with the same key. Emptied when it holds `limit`
 * results: that bounds it without bookkeeping on every hit.
 */
export function remembering<K, R>(fn: (key: K) => R, limit: number): (key: K) => R {
  const seen = new Map<K, R>();
  return (key) => {
    if (seen.has(key)) return seen.get(key) as R;
    if (seen.size >= limit) seen.clear();
    const result = fn(key);
    seen.set(key, result);
    return result;
  };
}
