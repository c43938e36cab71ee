// Batch planning: a pure function of rows and limits (no clock, database or network).
//
// Rows that share a group (app, template, values) become one template message; each group is
// cut into the fewest requests of at most `maxPerRequest` distinct numbers: ceil(n / max), all
// full but the last, numbers in row order. The rule is incremental (`placeNumber`): a group's next
// number joins its open request unless that request is full. So the planner (planner.ts) applies
// it row by row during intake, whatever order groups come in, and keeps only open requests in
// memory; and `planBatches` is the same rule over a whole list, which the tests check exhaustively.

import { SmsdropError } from '../errors.js';

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

/** Rows the planner cannot take: a bug of its caller, never an input's fault. */
export class PlanInputError extends SmsdropError {
  constructor(message: string) {
    super('E_PLAN_INPUT', message);
  }
}

/** Where a group's next number goes: into its open request, or into a new one. */
export function placeNumber(
  openRequestSize: number | undefined,
  limits: PlanLimits,
): 'open' | 'new' {
  return openRequestSize === undefined || openRequestSize >= limits.maxPerRequest ? 'new' : 'open';
}

/**
 * The batches for a list of rows, in the order each batch is opened. Throws PlanInputError on a
 * bad limit or a number repeated within a group (the journal keeps one row per number).
 */
export function planBatches(rows: Iterable<PlanRow>, limits: PlanLimits): PlannedBatch[] {
  const max = limits.maxPerRequest;
  if (!Number.isInteger(max) || max < 1)
    throw new PlanInputError(`maxPerRequest must be a whole number >= 1, got ${max}`);
  const batches: PlannedBatch[] = [];
  const open = new Map<number, PlannedBatch>();
  const seen = new Map<number, Set<string>>();
  for (const row of rows) {
    const numbers = seen.get(row.groupId) ?? new Set<string>();
    if (numbers.has(row.phone))
      throw new PlanInputError(`number ${row.phone} repeats in group ${row.groupId}`);
    seen.set(row.groupId, numbers.add(row.phone));
    let batch = open.get(row.groupId);
    if (placeNumber(batch?.rowIds.length, limits) === 'new') {
      batch = { groupId: row.groupId, rowIds: [], phones: [] };
      open.set(row.groupId, batch);
      batches.push(batch);
    }
    batch!.rowIds.push(row.rowId);
    batch!.phones.push(row.phone);
  }
  return batches;
}

/** Requests needed for a group of n distinct numbers. */
export function requestsFor(n: number, maxPerRequest: number): number {
  return Math.ceil(n / maxPerRequest);
}
