// Batch planning: a pure function of rows and limits (no clock, database or network).
//
// Rows that share a group (app, template, values) become one template message; each group is
// cut into the fewest requests of at most `maxPerRequest` distinct numbers: ceil(n / max), all
// full but the last. Rows arrive ordered by group id, so only one group is open at a time and
// memory stays at one request's worth of numbers, whatever the size of the file.

export interface PlanRow {
  rowId: number;
  groupId: number;
  phone: string;
}

export interface PlannedBatch {
  groupId: number;
  rowIds: number[];
  phones: string[];
}

export interface PlanLimits {
  maxPerRequest: number;
}

export class PlanInputError extends Error {
  override name = 'PlanInputError';
}

/**
 * Yields the batches for rows sorted by ascending group id. Throws PlanInputError if the rows
 * are not sorted, or a number repeats within one request. (Across a group's requests the journal
 * guarantees one row per number; checking that here would make memory grow with the group.)
 */
export function* planBatches(rows: Iterable<PlanRow>, limits: PlanLimits): Generator<PlannedBatch> {
  const max = limits.maxPerRequest;
  if (!Number.isInteger(max) || max < 1) throw new PlanInputError(`maxPerRequest must be a whole number >= 1, got ${max}`);
  let current: PlannedBatch | undefined;
  const seenInBatch = new Set<string>();
  for (const row of rows) {
    if (!current || row.groupId !== current.groupId) {
      if (current && row.groupId < current.groupId) {
        throw new PlanInputError(`rows are not sorted by group: group ${row.groupId} after ${current.groupId}`);
      }
      if (current && current.rowIds.length > 0) yield current;
      current = { groupId: row.groupId, rowIds: [], phones: [] };
      seenInBatch.clear();
    }
    if (seenInBatch.has(row.phone)) throw new PlanInputError(`number ${row.phone} repeats in group ${row.groupId}`);
    seenInBatch.add(row.phone);
    current.rowIds.push(row.rowId);
    current.phones.push(row.phone);
    if (current.rowIds.length === max) {
      yield current;
      current = { groupId: row.groupId, rowIds: [], phones: [] };
      seenInBatch.clear();
    }
  }
  if (current && current.rowIds.length > 0) yield current;
}

/** Requests needed for a group of n distinct numbers. */
export function requestsFor(n: number, maxPerRequest: number): number {
  return Math.ceil(n / maxPerRequest);
}
