// A file's intake on a thread of its own (SMSDROP_INTAKE_THREAD): reading, decoding, parsing,
// checking and planning the rows, and writing them into the journal on the thread's own
// connection (intakeWorker.ts), while this thread sends and records outcomes. Only a few messages
// cross: "batches were released and committed", and at the end the batches to send first, or the
// error. The rows never cross: copying them costs about as much as reading them
// (docs/benchmark-history.md).
//
// SQLite lets one connection write at a time. The intake's thread keeps its transaction open
// between chunks of rows and hands the journal over when this thread's write queue asks (the write
// gate): a word in shared memory says who may write, so neither thread sleeps in SQLite's busy
// handler for the other. Why it stays exactly once: docs/design.md, "The intake on its own thread".
import type { Worker } from 'node:worker_threads';
import type { RepeatWindow } from '../config/settings/durations.js';
import { SmsdropError, type ErrorCode } from '../errors.js';
import { FileRefusedError, type RefusalCode } from '../intake/errors.js';
import type { IntakeOptions } from '../intake/row.js';
import { startWorker } from '../workerThread.js';
import type { IntakeWriterLink, KeptRows, WriteGate } from '../ports/index.js';

/** Who may write the journal now: the word at index 0 of IntakeJob.lock. */
export const LOCK = {
  /** The intake's thread (its transaction may be open). */
  intake: 0,
  /** The sending thread asks: the intake's thread commits and hands over at its next chunk. */
  wanted: 1,
  /** The sending thread (the intake's thread waits, nothing of it open). */
  sender: 2,
  /** The intake's thread writes no more. */
  done: 3,
} as const;

/** What the intake's thread is given (structured-cloned: no functions). */
export interface IntakeJob {
  location: string;
  synchronous: 'normal' | 'full';
  fileId: number;
  filePath: string;
  size: number;
  read: Omit<IntakeOptions, 'onHeader'>;
  maxPerRequest: number;
  kept: KeptRows;
  /** The repeat window, when other files' rows are asked (none with --resend). */
  window: RepeatWindow | undefined;
  /** Batches may be sent while the file is read (mayOverlap): group counts, size checks. */
  overlap: boolean;
  lock: SharedArrayBuffer;
}

/** An error as it crosses between threads (its class and fields are rebuilt on this side). */
export interface ThreadError {
  name: string;
  message: string;
  code?: string;
  file?: string;
  reason?: string;
  line?: number;
}

export type IntakeMessage =
  | { type: 'released' }
  | { type: 'done'; sendFirst: number[] }
  | { type: 'failed'; error: ThreadError };

export function toThreadError(err: unknown): ThreadError {
  const e = err as Partial<FileRefusedError> & { code?: unknown };
  return {
    name: e?.name ?? 'Error',
    message: e?.message ?? String(err),
    ...(typeof e?.code === 'string' ? { code: e.code } : {}),
    ...(err instanceof FileRefusedError
      ? {
          file: err.file,
          reason: err.reason,
          ...(err.line === undefined ? {} : { line: err.line }),
        }
      : {}),
  };
}

function fromThreadError(e: ThreadError): Error {
  if (e.name === 'FileRefusedError')
    return new FileRefusedError(e.code as RefusalCode, e.file ?? '', e.reason ?? e.message, e.line);
  if (e.code?.startsWith('E_')) return new SmsdropError(e.code as ErrorCode, e.message);
  // SQLite's and the system's errors keep their code: refusalOf tells them apart by it.
  return Object.assign(new Error(e.message), { name: e.name, ...(e.code ? { code: e.code } : {}) });
}

/** The sending thread's side of the lock word (see LOCK). */
function gateOf(lock: Int32Array, nudge: () => void): WriteGate {
  const waitFor = async (): Promise<void> => {
    for (;;) {
      const now = Atomics.load(lock, 0);
      if (now === LOCK.sender || now === LOCK.done) return;
      const wait = (Atomics as unknown as AtomicsWithWaitAsync).waitAsync(lock, 0, now);
      if (wait.async) await wait.value;
    }
  };
  return {
    acquire() {
      if (Atomics.load(lock, 0) === LOCK.done) return undefined;
      Atomics.compareExchange(lock, 0, LOCK.intake, LOCK.wanted);
      nudge(); // the intake's thread may be waiting for the file, not between chunks
      return waitFor();
    },
    release() {
      if (Atomics.compareExchange(lock, 0, LOCK.sender, LOCK.intake) === LOCK.sender)
        Atomics.notify(lock, 0);
    },
  };
}

interface AtomicsWithWaitAsync {
  waitAsync(
    array: Int32Array,
    index: number,
    value: number,
  ): { async: false; value: string } | { async: true; value: Promise<string> };
}

/**
 * The intake's garbage (each chunk's cells and rows) dies young: a small young generation keeps the
 * thread's heap, and the process's peak memory, small. The old generation is not limited: the
 * numbers of an earlier file's group (the repeat window) may take tens of MB.
 */
const INTAKE_THREAD_LIMITS = { maxYoungGenerationSizeMb: 8 };

export interface IntakeThread {
  /** Settles once the thread has ended: with the batches to send first, or the intake's error. */
  finished: Promise<{ sendFirst: number[] }>;
  /** Ends the thread now (its uncommitted rows are lost, as in a crash). */
  stop(): Promise<void>;
}

/**
 * Starts the intake of `job` on a thread of its own; `onReleased` is called each time batches it
 * released are committed (due). This journal's queued writes pass the thread's write gate until
 * the thread has ended.
 */
export function startIntakeThread(
  link: IntakeWriterLink,
  job: Omit<IntakeJob, 'location' | 'lock'>,
  onReleased: () => void,
): IntakeThread {
  const lock = new Int32Array(new SharedArrayBuffer(4));
  const full: IntakeJob = { ...job, location: link.location, lock: lock.buffer };
  const worker: Worker = startWorker(import.meta.url, 'intakeWorker', {
    workerData: full,
    resourceLimits: INTAKE_THREAD_LIMITS,
  });
  const unshare = link.shareWrites(gateOf(lock, () => worker.postMessage(0)));
  let outcome: IntakeMessage | undefined;
  let crash: Error | undefined;
  worker.on('message', (message: IntakeMessage) => {
    if (message.type === 'released') onReleased();
    else outcome = message;
  });
  worker.on('error', (err: Error) => (crash ??= err));
  const finished = new Promise<{ sendFirst: number[] }>((resolve, reject) => {
    worker.once('exit', (exitCode) => {
      // Whatever happened, this thread writes alone again.
      Atomics.store(lock, 0, LOCK.done);
      Atomics.notify(lock, 0);
      unshare();
      if (outcome?.type === 'done') resolve({ sendFirst: outcome.sendFirst });
      else if (outcome?.type === 'failed') reject(fromThreadError(outcome.error));
      else
        reject(
          crash ??
            new SmsdropError(
              'E_INTERNAL',
              `the intake's thread ended (exit code ${exitCode}) before it said how`,
            ),
        );
    });
  });
  return {
    finished,
    stop: async () => {
      await worker.terminate();
      await finished.catch(() => {});
    },
  };
}
