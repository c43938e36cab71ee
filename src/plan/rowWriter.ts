// What intake runs: the planner (planner.ts) writing one file's rows into the journal.
import { JournalPlanStore } from '../journal/planStore.js';
import type { Journal } from '../journal/open.js';
import { Planner, type PlannerOptions, type RowWriter } from './planner.js';

export type { IntakeCounts, PlannerOptions, RowToJournal, RowWriter } from './planner.js';

/** The planner for file `fileId`'s intake, on this journal. */
export function createRowWriter(db: Journal, fileId: number, options: PlannerOptions): RowWriter {
  return new Planner(new JournalPlanStore(db, fileId), options);
}
