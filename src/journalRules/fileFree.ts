// Whether a batch's file may start requests (an operator's hold: ports/control.ts), as SQL the
// attempt start puts in its own UPDATE (outcomes.ts, startAttempt): a command written before it
// is seen, and one written while it runs waits for it (control.ts).
import type { Fragment } from './rule.js';

/**
 * SQL true while the batch's file may start requests at `?` (now, ISO 8601): no control set, and
 * its start time (if any) come. `lock`: Dialect.forShare, so that a command changing the file waits
 * for the transaction that starts the request, and a start after the command sees it.
 */
export function fileFreeToGo(now: string, lock: string): Fragment {
  return [
    `EXISTS (SELECT 1 FROM files f WHERE f.id = batches.file_id AND f.control IS NULL AND (f.start_at IS NULL OR f.start_at <= ?)${lock})`,
    now,
  ];
}
