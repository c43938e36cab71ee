// The planner writing one file's rows into a journal a test opened by hand, through the port that
// intake writes through (FileStore.planStore).
import type { Journal } from '../../src/journal/connection.js';
import { handleOf } from '../../src/journal/stores/handle.js';
import { createRowWriter, type PlannerOptions, type RowWriter } from '../../src/plan/rowWriter.js';

export function planWriter(db: Journal, fileId: number, options: PlannerOptions): RowWriter {
  return createRowWriter(handleOf(db).files.planStore(fileId), options);
}
