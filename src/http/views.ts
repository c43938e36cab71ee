// What the JSON API and the dashboard show, read from the journal when asked: the figures of
// `smsdrop report --format json` (report/summary.ts), with each unfinished file's progress and
// ETA as `smsdrop status` reckons them (report/status.ts), and the send rate of the last hour.
import { waitingFor } from '../ports/control.js';
import type { ReadStore } from '../ports/index.js';
import type { FileControl } from '../ports/states.js';
import {
  adviceFor,
  type FailureLine,
  type FileLine,
  type FileReport,
  fileReport,
} from '../report/summary.js';
import { type FileProgress, readStatus, type StatusReport } from '../report/status.js';

/** Progress and ETA of a file (null for a finished one: nothing left to wait for). */
export interface Progress {
  progress: number | null;
  eta_seconds: number | null;
  rows_per_second: number | null;
  /** Where nodes share the journal, of a file in progress: as status shows (fileNodes.ts). */
  read_by?: string | null;
  batches_held_by?: Array<{ node: string; batches: number }>;
}

/**
 * An operator's hold on a file (ports/control.ts): its control, its start time, what it waits for
 * in a word (held, scheduled, paused, cancelled; null: it goes or it is over), and the numbers
 * its cancel left unsent.
 */
export interface ControlView {
  control: FileControl | null;
  start_at: string | null;
  waiting: FileControl | 'scheduled' | null;
  cancelled: number;
}

/** pruned: its rows went (SMSDROP_KEEP), so no result file can be written from the journal. */
export type FileView = FileLine &
  Progress &
  ControlView & { failures: FailureLine[]; pruned: boolean };

/** The files shown at most by /api/files and the dashboard: the latest ones. */
const MOST_FILES = 200;

/** What the views read: the journal's read port. */
export interface ViewSource {
  reads: ReadStore;
}

/** Every file (the latest MOST_FILES), newest first, with progress and failures by code. */
export async function fileViews(
  reads: ReadStore,
  status: StatusReport,
  now = Date.now(),
): Promise<FileView[]> {
  const live = new Map(status.files.map((f) => [f.id, f]));
  const pruned = await reads.prunedFileIds();
  const latest = (await reads.listFiles()).slice(-MOST_FILES).reverse();
  const views: FileView[] = [];
  for (const line of latest)
    views.push({
      ...line,
      ...progressOf(line, live.get(line.id)),
      ...controlView(line, now),
      failures: await failuresOf(reads, line.id),
      pruned: pruned.has(line.id),
    });
  return views;
}

/**
 * One file as `smsdrop report FILE --format json` has it, with progress; undefined when there is
 * none.
 */
export async function fileView(
  source: ViewSource,
  id: number,
  status: StatusReport,
  now = Date.now(),
): Promise<(FileReport & Progress & ControlView) | undefined> {
  if (!(await source.reads.file(id))) return undefined;
  const report = await fileReport(source.reads, id);
  return {
    ...report,
    ...controlView(report, now),
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
      ...(live.read_by !== undefined ? { read_by: live.read_by } : {}),
      ...(live.batches_held_by ? { batches_held_by: live.batches_held_by } : {}),
    };
  const sendable = line.rows - line.invalid - line.duplicates;
  const settled = line.accepted + line.failed + line.unknown;
  return {
    progress: sendable > 0 ? Math.round((settled / sendable) * 10_000) / 10_000 : 1,
    eta_seconds: null,
    rows_per_second: null,
  };
}

/** v_files' control columns (its line carries them: SELECT *), read whatever FileLine types. */
function controlView(line: FileLine, now: number): ControlView {
  const columns = line as FileLine & Partial<Omit<ControlView, 'waiting'>>;
  const state = { control: columns.control ?? null, startAt: columns.start_at ?? null };
  const over = line.status === 'done' || line.status === 'refused';
  return {
    control: state.control,
    start_at: state.startAt,
    waiting: over ? null : (waitingFor(state, now) ?? null),
    cancelled: Number(columns.cancelled ?? 0),
  };
}

async function failuresOf(reads: ReadStore, fileId: number): Promise<FailureLine[]> {
  return (await reads.failureCounts(fileId)).map((l) => ({
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

export async function overview(
  source: ViewSource,
  dataDir: string,
  now = Date.now(),
): Promise<Overview> {
  return {
    status: await readStatus(source.reads, dataDir, now),
    rate: await source.reads.sendRateByMinute(new Date(now - 3_600_000).toISOString()),
  };
}
