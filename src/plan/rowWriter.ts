// What intake runs: the planner (planner.ts) writing one file's rows into the journal.
import { JournalPlanStore } from '../journal/planStore.js';
import type { Journal } from '../journal/open.js';
import { Planner, type PlannerOptions, type RowWriter, type SyncRowWriter } from './planner.js';
import type { PlanStore } from './store.js';

export type {
  IntakeCounts,
  PlannerOptions,
  RowToJournal,
  RowWriter,
  SyncRowWriter,
} from './planner.js';

/** The planner for one file's intake, writing through `store` (FileStore.planStore(id)). */
export function createRowWriter(store: PlanStore, options: PlannerOptions): RowWriter;
/**
 * @deprecated the planner for file `fileId` on this journal: callers pass
 * `files.planStore(fileId)` instead (goes, with this module's journal imports, with the shims).
 * SQLite's store answers at once: nothing to await.
 */
export function createRowWriter(
  db: Journal,
  fileId: number,
  options: PlannerOptions,
): SyncRowWriter;
export function createRowWriter(
  storeOrDb: PlanStore | Journal,
  fileIdOrOptions: number | PlannerOptions,
  options?: PlannerOptions,
): RowWriter {
  if (typeof fileIdOrOptions === 'number')
    // JournalPlanStore's verbs return plain values, and so then do the planner's (SyncRowWriter).
    return new Planner(new JournalPlanStore(storeOrDb as Journal, fileIdOrOptions), options!);
  return new Planner(storeOrDb as PlanStore, fileIdOrOptions);
}
