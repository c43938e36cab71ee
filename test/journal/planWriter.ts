// The planner writing one file's rows into a journal a test opened by hand, through the port that
// intake writes through (FileStore.planStore).
import type { Journal } from '../../src/journal/connection.js';
import { handleOf } from '../../src/journal/handle.js';
import {
  createRowWriter,
  type PlannerOptions,
  type RowToJournal,
  type SyncRowWriter,
} from '../../src/plan/rowWriter.js';

/** SQLite's plan store answers at once, and so then does the planner: nothing to await. */
export function planWriter(db: Journal, fileId: number, options: PlannerOptions): SyncRowWriter {
  return createRowWriter(handleOf(db).files.planStore(fileId), options) as SyncRowWriter;
}

/** A valid row as intake makes it: app `app`, template `templateId`, one value. */
export const plannedRow = (
  line: number,
  phone: string,
  value = 'a',
  templateId = '1',
): RowToJournal => ({
  line,
  phoneRaw: phone,
  phone,
  appId: 'app',
  templateId,
  datas: [value],
  extras: [],
});
