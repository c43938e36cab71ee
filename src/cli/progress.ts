// `smsdrop send`'s progress bar, on a terminal only. Two phases, each with a total known from the
// start: while the file is read, bytes read of the file's size; once every row is read, rows
// settled of the rows to send. (A bar over "rows planned so far" showed 300000/9400 while the
// file was still being read.)
import { createRequire } from 'node:module';
import type { SingleBar } from 'cli-progress';
import type { FileStore } from '../ports/index.js';
import { FILE_STATUS } from '../ports/states.js';
import type { PipelineContext } from '../pipeline/index.js';
import { bytesRead } from '../intake/readPosition.js';

/** How often the bar is brought up to date. */
const TICK_MS = 250;

export interface ProgressInput {
  /** The file's journal status; undefined before its record exists. */
  status: string | undefined;
  /** Bytes the reading has reached; undefined where the system cannot say. */
  bytes: number | undefined;
  size: number;
  /** Once read: rows with a final outcome, and rows to send (not invalid, not duplicates). */
  settled: number;
  sendable: number;
}

export interface ProgressView {
  phase: 'reading' | 'sending';
  value: number;
  total: number;
  /** "12.3/32.0 MB" or "1200/9400 rows". */
  text: string;
}

/** What the bar shows: the bytes read while the file is read, then the rows settled. */
export function progressView(p: ProgressInput): ProgressView {
  if (p.status === undefined || p.status === FILE_STATUS.intake) {
    const bytes = Math.min(p.bytes ?? 0, p.size);
    const mb = (n: number) => (n / 1e6).toFixed(1);
    return {
      phase: 'reading',
      value: bytes,
      total: p.size,
      text: p.bytes === undefined ? `${mb(p.size)} MB` : `${mb(bytes)}/${mb(p.size)} MB`,
    };
  }
  return {
    phase: 'sending',
    value: p.settled,
    total: p.sendable,
    text: `${p.settled}/${p.sendable} rows`,
  };
}

export { bytesRead } from '../intake/readPosition.js';

/** Starts the bar for `file` (hashed as `sha256`, `size` bytes) if stdout is a terminal. */
export function startSendProgress(
  context: PipelineContext,
  files: BarFiles,
  file: string,
  sha256: string,
  size: number,
): { stop(): void } {
  if (!process.stdout.isTTY) return { stop: () => {} };
  const bar = newBar();
  const state: BarState = {
    sending: undefined,
    phase: undefined,
    recordId: undefined,
    stopped: false,
  };
  const previous = context.onBatchDone;
  context.onBatchDone = (event) => {
    previous?.(event);
    if (state.sending) state.sending.settled += event.rowsSettled;
  };
  // Not at once: the file's record is made (or found) by the pipeline's first steps.
  const target = { file, sha256, size };
  let ticking = false;
  const timer = setInterval(() => {
    if (ticking) return; // the journal answers asynchronously: one tick at a time
    ticking = true;
    tick(files, target, state, bar)
      .catch(() => {}) // a bar that misses a tick is no reason to stop sending
      .finally(() => (ticking = false));
  }, TICK_MS);
  timer.unref();
  return {
    stop: () => {
      clearInterval(timer);
      state.stopped = true;
      context.onBatchDone = previous;
      bar.stop();
    },
  };
}

function newBar(): SingleBar {
  // Loaded only for a terminal: a run under pm2 or a script does not carry it.
  const { SingleBar: Bar } = createRequire(import.meta.url)(
    'cli-progress',
  ) as typeof import('cli-progress');
  return new Bar({
    format: '{phase} [{bar}] {text} | {eta_formatted} left',
    hideCursor: true,
    clearOnComplete: true,
    etaBuffer: 50,
  });
}

/** What the bar has shown so far. */
interface BarState {
  /** Once every row is read: rows settled, of the rows to send. */
  sending: { settled: number; sendable: number } | undefined;
  phase: ProgressView['phase'] | undefined;
  /** The file's journal record the counts are of. */
  recordId: number | undefined;
  /** stop() was called: a tick still reading draws nothing more. */
  stopped: boolean;
}

/** What the bar reads of the journal: the file's record and its counts. */
type BarFiles = Pick<FileStore, 'identify' | 'counts'>;

/** Brings the bar up to date from the journal and the file's read position. */
async function tick(
  files: BarFiles,
  target: { file: string; sha256: string; size: number },
  state: BarState,
  bar: SingleBar,
): Promise<void> {
  const record = await files.identify(target.sha256);
  if (record?.id !== state.recordId) {
    // A new record (a --resend makes one after finding the earlier): its own counts.
    state.recordId = record?.id;
    state.sending = undefined;
  }
  if (record && record.status !== FILE_STATUS.intake && !state.sending) {
    // Every row is read: from here on, rows settled of the rows to send.
    const c = await files.counts(record.id);
    state.sending = {
      settled: c.accepted + c.failed + c.unknown,
      sendable: c.rows - c.invalid - c.duplicates,
    };
  }
  const view = progressView({
    status: record?.status,
    bytes: state.sending ? undefined : bytesRead(target.file),
    size: target.size,
    settled: state.sending?.settled ?? 0,
    sendable: state.sending?.sendable ?? 0,
  });
  if (state.stopped) return;
  if (view.phase !== state.phase) {
    // A new total: the ETA of the bytes says nothing of the rows.
    if (state.phase) bar.stop();
    bar.start(view.total, view.value, { phase: view.phase, text: view.text });
    state.phase = view.phase;
  } else bar.update(view.value, { text: view.text });
}
