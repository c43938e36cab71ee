// What intake (intakeRun.ts) does with a file's rows: the header recorded, the rows an
// interrupted intake kept marked, and the file's size checked while sending overlaps reading.
import { statSync } from 'node:fs';
import type { KeptRows } from '../ports/index.js';
import type { RowToJournal } from '../plan/rowWriter.js';
import type { PlanStore } from '../ports/plan.js';
import { FileRefusedError } from '../intake/errors.js';
import type { GroupCounts } from '../intake/groupCounts.js';
import type { IntakeOptions, IntakeRow } from '../intake/row.js';

/**
 * Records the file's header. Group counts made under another header than intake read say nothing.
 */
export function headerTaker(
  store: PlanStore,
  groupCounts: GroupCounts | undefined,
): IntakeOptions['onHeader'] {
  return (map, extraNames) => {
    groupCounts?.headerRead(map.header);
    store.saveHeader({ columns: map.header, extras: extraNames });
  };
}

/** Marks the rows an interrupted intake left in the journal (ascending lines, like the chunks). */
export function keptRowMarker(kept: KeptRows): (chunk: IntakeRow[]) => RowToJournal[] {
  let next = 0;
  return (chunk) => {
    if (next >= kept.lines.length) return chunk;
    return chunk.map((row) => {
      while (next < kept.lines.length && kept.lines[next]! < row.line) next++;
      return kept.lines[next] === row.line ? { ...row, keptRowId: kept.ids[next]! } : row;
    });
  };
}

/**
 * A file still being written after it was taken would lose the rows added late: refuse it whole.
 */
export function assertUnchanged(filePath: string, size: number): void {
  const now = statSync(filePath).size; // a file gone while it is read is refused too
  if (now !== size) {
    throw new FileRefusedError(
      'E_FILE_CHANGED',
      filePath,
      `the file changed while it was being read (${size} bytes, now ${now}): drop it again once it is complete`,
    );
  }
}
