// Intake of a CSV file through the ports (FileStore, PlanStore, the repeat window's look-up) into
// either journal, as the pipeline runs it (src/pipeline/intakeRun.ts), for the PostgreSQL tests.
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import { readRows } from '../../src/intake/index.js';
import type { IntakeRow } from '../../src/intake/row.js';
import type { KeptRows } from '../../src/ports/index.js';
import type { FileStore } from '../../src/ports/files.js';
import { createRowWriter, type RowToJournal } from '../../src/plan/rowWriter.js';
import type { SeenNumbers } from '../../src/plan/seenNumbers.js';
import type { SentBeforeLookup } from '../../src/ports/plan.js';

export interface IntakeRun {
  files: FileStore;
  sentBefore?: (fileId: number) => Promise<SentBeforeLookup | undefined>;
  /** Stops after this many chunks, as a refused file does (abandon: settled and committed). */
  chunks?: number;
  /** An intake again of this record (resumed), instead of a new one. */
  fileId?: number;
  /** The planner's filter of numbers placed (a tiny one: nearly every number is a doubt). */
  seenNumbers?: SeenNumbers;
  /** Called after each chunk is written, with the chunks written so far. */
  afterChunk?: (chunks: number) => Promise<void>;
}

/** Reads `csv` into the journal; returns the file's id and the chunks written. */
export async function intakeFile(
  csv: string,
  run: IntakeRun,
): Promise<{ fileId: number; chunks: number }> {
  const bytes = fs.readFileSync(csv);
  const sha256 = createHash('sha256').update(bytes).digest('hex');
  const fileId =
    run.fileId ??
    (
      await run.files.create({
        sha256,
        name: csv.split('/').pop()!,
        path: csv,
        size: bytes.length,
        encoding: 'utf-8',
      })
    ).id;
  // As the pipeline does: the file is this node's to read (PostgreSQL's intake commits check it).
  const reader = await run.files.claim(fileId);
  if (reader !== undefined) throw new Error(`file ${fileId} is node ${reader}'s to read`);
  const kept = await run.files.beginIntake(fileId);
  const store = run.files.planStore(fileId);
  const sentBefore = await run.sentBefore?.(fileId);
  const writer = createRowWriter(store, {
    maxPerRequest: 200,
    rowsKept: kept.lines.length,
    fileBytes: bytes.length,
    ...(run.seenNumbers ? { seenNumbers: run.seenNumbers } : {}),
    ...(sentBefore ? { sentBefore } : {}),
  });
  const markKept = keptRowMarker(kept);
  let chunks = 0;
  const rows = readRows(csv, {
    encoding: 'utf-8',
    allowInternational: true,
    defaultAppId: 'app',
    onHeader: (map, extras) => store.saveHeader({ columns: map.header, extras }),
  });
  try {
    for await (const chunk of rows) {
      await writer.write(markKept(chunk));
      await run.afterChunk?.(chunks + 1);
      if (++chunks === run.chunks) {
        await writer.abandon();
        return { fileId, chunks };
      }
    }
  } catch (error) {
    // As the pipeline does (src/pipeline/intakeRun.ts): the store's open transaction ends, or
    // its connection stays checked out of the pool, and the pool's end waits for it for ever.
    await Promise.resolve()
      .then(() => writer.abandon())
      .catch(() => undefined);
    throw error;
  }
  await writer.finish();
  await run.files.status(fileId, 'sending');
  return { fileId, chunks };
}

function keptRowMarker(kept: KeptRows): (chunk: IntakeRow[]) => RowToJournal[] {
  let next = 0;
  return (chunk) =>
    chunk.map((row) => {
      while (next < kept.lines.length && kept.lines[next]! < row.line) next++;
      return kept.lines[next] === row.line ? { ...row, keptRowId: kept.ids[next]! } : row;
    });
}

/**
 * A list of `rows` rows: five shared messages and some personal ones, numbers repeated within a
 * message, invalid and international numbers, a suppressed one, an extra column; `shift` moves the
 * numbers (a second file sharing some rows with the first).
 */
export function writeCsv(csv: string, rows: number, shift = 0): void {
  const lines = ['mobile,template,var1,note'];
  for (let i = 0; i < rows; i++) {
    const n = i + shift;
    const phone =
      n % 97 === 5
        ? '12345'
        : n % 301 === 7
          ? `0044207946${String(n % 10000).padStart(4, '0')}`
          : String(13800000000 + ((n * 7) % 2500));
    const value = n % 50 === 3 ? `p${n}` : `v${n % 5}`;
    lines.push(`${phone},7,${value},note ${n}`);
  }
  fs.writeFileSync(csv, lines.join('\n') + '\n');
}
