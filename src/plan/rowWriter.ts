// What intake runs: the planner (planner.ts) writing one file's rows into the journal.
import { Planner, type PlannerOptions, type RowWriter } from './planner.js';
import type { PlanStore } from './store.js';

export type {
  IntakeCounts,
  PlannerOptions,
  RowToJournal,
  RowWriter,
  SyncRowWriter,
} from './planner.js';

/** The planner for one file's intake, writing through `store` (FileStore.planStore(id)). */
export function createRowWriter(store: PlanStore, options: PlannerOptions): RowWriter {
  return new Planner(store, options);
}
