// What `smsdrop status` says of one unfinished file (its line, and the table of them) besides its
// counts: whether a living process sends it now, and its times. A file is sent by a run (send,
// resume, retry, the daemon's), which the journal records from its start to its end
// (journalRules/runs.ts); a run is going on when its start is recorded and the process that holds
// the data directory began before it (so a run cut off by a crash, its start left behind, is not
// taken for one), or, with PostgreSQL, a node sharing the journal that began before it was seen
// lately.
import type { FilePreview } from './preview.js';
import type { FileRecord } from '../ports/index.js';
import { runTimeMs, sinceTakenMs } from '../journalRules/runs.js';
import { formatDuration } from '../log/duration.js';
import { renderTable } from './common.js';
import { FILE_CONTROL } from '../ports/states.js';

/** One unfinished file as `smsdrop status` shows it. */
export interface FileProgress {
  id: number;
  name: string;
  /** intake, sending; or what an operator's hold makes it: held, scheduled, paused, cancelled. */
  status: string;
  /** When a scheduled file starts (ISO 8601). */
  start_at: string | null;
  /** A held file's preview (preview.ts), added by `smsdrop status`. */
  preview?: FilePreview;
  rows: number;
  /** Rows that will be sent: not invalid, not duplicates. */
  sendable: number;
  /** Sendable rows with a final outcome. */
  settled: number;
  pending: number;
  /** settled / sendable, 0..1; null while the file is still being read. */
  progress: number | null;
  /** Rows settled per second over the last minute, or since the file started if that is less. */
  rows_per_second: number;
  eta_seconds: number | null;
  in_flight_requests: number;
  in_flight_numbers: number;
  /**
   * rows, sendable and pending are estimated from the bytes read, the file being still read
   * (report/estimate.ts); false: counted.
   */
  estimated: boolean;
  /** A living process sends it now (report/fileState.ts); false: it is stopped. */
  being_sent: boolean;
  /** Its runs' time, summed over every run (null: not recorded). */
  sending_seconds: number | null;
  /** The time since it was first taken (null: not recorded). */
  since_taken_seconds: number | null;
  /** The node reading it (null: none now); only where nodes share the journal (fileNodes.ts). */
  read_by?: string | null;
  /** The batches of it each node holds now, most first; only where nodes share the journal. */
  batches_held_by?: Array<{ node: string; batches: number }>;
}

/** A node seen this recently is alive (nodes renew their leases every lease/3, 10 s by default). */
const NODE_ALIVE_WITHIN_S = 60;

/** Who may be sending: the data directory's holder, and PostgreSQL's nodes. */
export interface Senders {
  holder: { since: string | null } | null;
  nodes: ReadonlyArray<{ started_at: string; seen_seconds_ago: number }>;
}

/** Whether a living process is sending the file now. */
export function beingSent(
  file: Pick<FileRecord, 'run_started_at'> | undefined,
  senders: Senders,
): boolean {
  const started = file?.run_started_at;
  if (!started) return false;
  const runStart = Date.parse(started);
  const before = (since: string | null) => since === null || Date.parse(since) <= runStart;
  if (senders.holder && before(senders.holder.since)) return true;
  return senders.nodes.some(
    (n) => n.seen_seconds_ago <= NODE_ALIVE_WITHIN_S && before(n.started_at),
  );
}

/** A file's times: its runs' time summed, and the time since it was first taken. */
export function fileTimes(
  file: Pick<FileRecord, 'run_ms' | 'run_started_at' | 'created_at' | 'finished_at'> | undefined,
  now: number,
  sending: boolean,
): { sending_seconds: number; since_taken_seconds: number } | null {
  if (!file) return null;
  const at = new Date(now).toISOString();
  // A run left open by a crash counts no further than its start: its time is known at the next.
  const runs = sending ? runTimeMs(file, at) : file.run_ms;
  return {
    sending_seconds: Math.round(runs / 1000),
    since_taken_seconds: Math.round(sinceTakenMs(file, at) / 1000),
  };
}

/**
 * What to run to finish a file nobody sends. A file read to the end is finished from the journal
 * (resume); one cut off while it was read needs its bytes again (they go on where they stopped).
 * With the daemon holding the data directory, resume cannot run: the daemon sends the files in its
 * processing/ (after a pause), and takes the same bytes dropped into inbox/ again.
 */
export function finishAdvice(name: string, readToEnd: boolean, daemonRuns: boolean): string {
  if (daemonRuns)
    return 'the daemon sends it on if it lies in its processing/ (after a pause); otherwise drop the same file into inbox/ again';
  return readToEnd
    ? `run smsdrop resume ${name}, or start the daemon (smsdrop run) if it lies in processing/`
    : `give the same file again (smsdrop send FILE, or start the daemon if it lies in processing/): it goes on where it stopped`;
}

/** What a file's status is while an operator's hold keeps it from sending (ports/control.ts). */
const OPERATOR_HOLDS = new Set<string>([FILE_CONTROL.held, 'scheduled', FILE_CONTROL.paused]);

/** An operator holds the file (held, scheduled, paused): it waits for them, not for a process. */
export function heldByOperator(f: Pick<FileProgress, 'status'>): boolean {
  return OPERATOR_HOLDS.has(f.status);
}

/**
 * The files in progress: rows settled of the rows to send (estimated, "~", while a file is read),
 * rate and ETA of the files being sent, and each file's time (its runs', and since it was taken).
 */
export function filesTable(files: readonly FileProgress[]): string {
  const about = (f: FileProgress) => (f.estimated ? '~' : '');
  const seconds = (n: number | null) => (n === null ? '-' : formatDuration(n));
  return renderTable(
    ['id', 'name', 'status', 'progress', 'settled', 'to send', 'rows/s', 'ETA', 'sending', 'taken'],
    files.map((f) => [
      f.id,
      f.name,
      f.being_sent || heldByOperator(f) ? f.status : 'stopped',
      f.progress === null ? 'reading' : `${(f.progress * 100).toFixed(1)}%`,
      f.status === 'intake' && !f.estimated
        ? `${f.settled}/?`
        : `${f.settled}/${about(f)}${f.sendable}`,
      f.status === 'intake' && !f.estimated ? '?' : `${about(f)}${f.pending}`,
      f.being_sent ? f.rows_per_second : '-',
      f.eta_seconds === null ? '-' : `${about(f)}${formatDuration(f.eta_seconds)}`,
      seconds(f.sending_seconds),
      `${seconds(f.since_taken_seconds)} ago`,
    ]),
  );
}
