// The planner's port, PlanStore, and the vocabulary it shares with the journals: defined with the
// other ports (ports/plan.ts), named here for the planner's own files.
export type * from '../ports/plan.js';
