// Batch planning's rule, a pure function of a group's open request and the limits (no clock,
// database or network).
//
// Rows that share a group (app, template, values) become one template message; each group is
// cut into the fewest requests of at most `maxPerRequest` distinct numbers: ceil(n / max), all
// full but the last, numbers in row order. The rule is incremental (`placeNumber`): a group's next
// number joins its open request unless that request is full. So the planner (planner.ts) applies
// it row by row during intake, whatever order groups come in, and keeps only open requests in
// memory; test/plan/planner.test.ts checks it exhaustively through the planner.

import { SmsdropError } from '../errors.js';

export interface PlanLimits {
  maxPerRequest: number;
}

/** Limits the planner cannot plan with: a bug of its caller (settings are checked before). */
export class PlanInputError extends SmsdropError {
  constructor(message: string) {
    super('E_PLAN_INPUT', message);
  }
}

/** The limits as given, or PlanInputError: with a request size below 1 no batch could be sent. */
export function checkedLimits(limits: PlanLimits): PlanLimits {
  const max = limits.maxPerRequest;
  if (!Number.isInteger(max) || max < 1)
    throw new PlanInputError(`maxPerRequest must be a whole number >= 1, got ${max}`);
  return { maxPerRequest: max };
}

/** Where a group's next number goes: into its open request, or into a new one. */
export function placeNumber(
  openRequestSize: number | undefined,
  limits: PlanLimits,
): 'open' | 'new' {
  return openRequestSize === undefined || openRequestSize >= limits.maxPerRequest ? 'new' : 'open';
}
