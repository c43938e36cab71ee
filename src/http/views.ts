// What the JSON API and the dashboard show, read from the journal when asked: the figures of
// `smsdrop report --format json` (report/summary.ts), with each unfinished file's progress and
// ETA as `smsdrop status` reckons them (report/status.ts), and the send rate of the last hour.
import type { Journal } from '../journal/open.js';
import { getFile } from '../journal/files.js';
import { listFiles, prunedFileIds, sendRateByMinute } from '../journal/reads.js';
import {
  adviceFor,
  type FailureLine,
  type FileLine,
  type FileReport,
  fileReport,
} from '../report/summary.js';
import { type FileProgress, readStatus, type StatusReport } from '../report/status.js';
import { failureCounts } from '../journal/reads.js';
import { sqliteReadStore } from '../journal/stores/readStore.js';

/** Progress and ETA of a file (null for a finished one: nothing left to wait for). */
export interface Progress {
  progress: number | null;
  eta_seconds: number | null;
  rows_per_second: number | null;
}

/** pruned: its rows went (SMSDROP_KEEP), so no result file can be written from the journal. */
export type FileView = FileLine & Progress & { failures: FailureLine[]; pruned: boolean };

/** The files shown at most by /api/files and the dashboard: the latest ones. */
const MOST_FILES = 200;

/** Every file (the latest MOST_FILES), newest first, with progress and failures by code. */
export function fileViews(db: Journal, status: StatusReport): FileView[] {
  const live = new Map(status.files.map((f) => [f.id, f]));
  const pruned = prunedFileIds(db);
  return listFiles(db)
    .slice(-MOST_FILES)
    .reverse()
    .map((line) => ({
      ...line,
      ...progressOf(line, live.get(line.id)),
      failures: failuresOf(db, line.id),
      pruned: pruned.has(line.id),
    }));
}

/**
 * One file as `smsdrop report FILE --format json` has it, with progress; undefined when there is
 * none.
 */
export async function fileView(
  db: Journal,
  id: number,
  status: StatusReport,
): Promise<(FileReport & Progress) | undefined> {
  if (!getFile(db, id)) return undefined;
  const report = await fileReport(sqliteReadStore(db), id);
  return {
    ...report,
    ...progressOf(
      report,
      status.files.find((f) => f.id === id),
    ),
  };
}

function progressOf(line: FileLine, live: FileProgress | undefined): Progress {
  if (live)
    return {
      progress: live.progress,
      eta_seconds: live.eta_seconds,
      rows_per_second: live.rows_per_second,
    };
  const sendable = line.rows - line.invalid - line.duplicates;
  const settled = line.accepted + line.failed + line.unknown;
  return {
    progress: sendable > 0 ? Math.round((settled / sendable) * 10_000) / 10_000 : 1,
    eta_seconds: null,
    rows_per_second: null,
  };
}

function failuresOf(db: Journal, fileId: number): FailureLine[] {
  return failureCounts(db, fileId).map((l) => ({
    ...l,
    ...adviceFor(l.status, l.status_code, fileId),
  }));
}

export interface Overview {
  status: StatusReport;
  /**
   * Requests answered and numbers accepted per minute over the last hour (minutes with none left
   * out).
   */
  rate: Array<{ minute: string; requests: number; accepted: number }>;
}

export async function overview(db: Journal, dataDir: string, now = Date.now()): Promise<Overview> {
  return {
    status: await readStatus(sqliteReadStore(db), dataDir, now),
    rate: sendRateByMinute(db, new Date(now - 3_600_000).toISOString()),
  };
}
