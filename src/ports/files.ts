// What the pipeline, the daemon and the retry/resume core need of a file's journal record: find
// it, make it, move it through its statuses, and count what it holds.
import type { PlanStore } from './plan.js';
import type { Awaitable } from './awaitable.js';
import type { FileCounts, FileRecord, KeptRows, NewFile, WaitingFile } from './records.js';
import type { FileStatus } from './states.js';
import type { TakeOver } from './send.js';

export interface FileStore {
  /** The latest file with these bytes. */
  identify(sha256: string): Awaitable<FileRecord | undefined>;
  file(id: number): Awaitable<FileRecord | undefined>;
  /** Unfinished files that sent something and are shorter than `size` (a file that grew). */
  grownCandidates(size: number): Awaitable<FileRecord[]>;
  create(file: NewFile): Awaitable<FileRecord>;
  /**
   * As create, unless another process recorded these bytes since the caller found generation
   * `seen` as their latest (0: none): then nothing is made and undefined returned (the caller
   * looks again, and finds that record).
   */
  createUnlessRecorded(file: NewFile, seen: number): Awaitable<FileRecord | undefined>;
  /** The grown file `id` takes the new bytes' identity. */
  adopt(id: number, file: NewFile): Awaitable<FileRecord>;
  /** The bytes were taken again (a re-dropped file): noted on their latest record. */
  noteTaken(sha256: string): Awaitable<void>;
  setProvider(id: number, provider: string): Awaitable<void>;
  setEncoding(id: number, encoding: string): Awaitable<void>;
  /**
   * From now on this process reads and sends the file; or, when another node sharing the journal
   * does (a copy of the same bytes dropped there too), that node's id, and nothing changes.
   */
  claim(id: number): Awaitable<string | undefined>;
  /** The file's run in this process ended (whatever its outcome): another node may claim it. */
  unclaim(id: number): Awaitable<void>;
  /**
   * `listener` is told when a claim takes the file over from another node whose claim passed
   * (it died, or was cut off): the operator's log line and webhook event. Only a journal shared by
   * several processes has it.
   */
  whenTakenOver?(listener: (takeover: TakeOver) => void): void;
  /**
   * Waits until no other process sharing this journal is reading a file into it, and holds that
   * turn until the returned function is called. Each file's rows are checked against the files read
   * before it (the repeat window): two read at once would each miss the other's. The pipeline
   * orders its own intakes (IntakeTurns) and asks this once per intake; `stop` ends the wait (the
   * turn is then empty: the caller sees its stop). `bytes`, the file's size: a journal may let a
   * small file be read beside a large one, and then refuse a commit with E_INTAKE_TURN_YIELDED
   * (the file is to be read again in a turn asked without it).
   */
  intakeTurn(stop?: AbortSignal, wish?: { bytes?: number }): Promise<() => Promise<void>>;
  /** Throws away what an interrupted intake left (keeping rows already sent) and starts intake. */
  beginIntake(id: number): Awaitable<KeptRows>;
  /** The planner's store for this file's rows (synchronous: intake's inner loop). */
  planStore(id: number): PlanStore;
  /** Moves the file to `to`; 'done' is also committed (on disk once this resolves). */
  status(id: number, to: FileStatus, error?: string): Promise<void>;
  /**
   * Refuses the file: with no request sent its rows are dropped; otherwise they stay, recounted.
   * `explain` words the reason given how many requests went out.
   */
  refuse(
    id: number,
    explain: (requestsSent: number) => string,
  ): Promise<{ requestsSent: number; reason: string }>;
  /** A run of the file (send, resume, retry, the daemon's) starts now (journalRules/runs.ts). */
  runStarted(id: number): Promise<void>;
  /** The file's run going on ends now: its time is added to the file's. */
  runEnded(id: number): Promise<void>;
  /** The file being read has been read up to `bytes`. */
  noteReadBytes(id: number, bytes: number): Promise<void>;
  counts(id: number): Awaitable<FileCounts>;
  /** Earlier unfinished files whose rows this file's repeats wait for. */
  waitingRepeats(id: number): Awaitable<WaitingFile[]>;
  /** Requests made for the file's batches (attempts). */
  requestsMade(id: number): Awaitable<number>;
  /** When the file last made progress, and its requests so far (the daemon's late-file check). */
  lateness(id: number): Awaitable<{ lastProgressAt: string; requestsMade: number }>;
  planSummary(id: number): Awaitable<{ groups: number; requests: number; numbers: number }>;
}
