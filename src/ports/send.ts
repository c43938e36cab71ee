// What the sender (src/send/) needs of the journal: the due batches of a file, and the writes
// around each request. A claim changes nothing; startAttempts is the claim that counts (it
// returns undefined for a batch that is no longer planned under the same req_id).
import type { Awaitable } from './awaitable.js';
import type {
  AttemptHistory,
  AttemptResult,
  BatchRecord,
  BatchToSend,
  Transition,
} from './records.js';

/** Which due batches of a file to read: due by `now`, after `afterId`, none of `skip`. */
export interface DueQuery {
  fileId: number;
  now: number;
  afterId: number;
  limit: number;
  /** Batches the caller has queued already (they are left out of both lists). */
  skip: ReadonlySet<number>;
}

/** A batch about to be requested, as it was read (its req_id says it is still the same batch). */
export interface AttemptStart {
  batch: Pick<BatchRecord, 'id' | 'req_id'>;
  /** The reqId the request carries (null: reqId is off). */
  reqId: string | null;
}

/** Where a batch goes; with `attempt`, the answer of that attempt is recorded with it. */
export interface Outcome {
  batchId: number;
  transition: Transition;
  attempt?: { id: number; result: AttemptResult };
}

export interface SendStore {
  /**
   * Due batches: `first` are the ones intake asked to go first (each handed out once), `due` the
   * rest in id order after `afterId` (at most `limit`).
   */
  claimDueBatches(q: DueQuery): Awaitable<{ first: BatchToSend[]; due: BatchToSend[] }>;
  /**
   * Writes each attempt before its request leaves; resolves once on disk, with the attempt's id,
   * or undefined for a batch someone else moved. Calls made in one turn share one transaction.
   */
  startAttempts(starts: readonly AttemptStart[]): Promise<(number | undefined)[]>;
  /** Records outcomes (one transaction per turn, as startAttempts); resolves once on disk. */
  recordOutcomes(outcomes: readonly Outcome[]): Promise<void>;
  /** Batches a crash left `sending` are put back (reqId on) or ended unknown; returns how many. */
  recoverInterrupted(fileId: number, reqIdOn: boolean): Awaitable<number>;
  /** When the file's next planned batch is due (ms), or null when it has none. */
  nextDueAt(fileId: number): Awaitable<number | null>;
  attemptHistory(batchId: number, reqId: string): Awaitable<AttemptHistory>;
  /**
   * No request of any file got an answer since this batch's last `attempts` attempts began; on
   * PostgreSQL, no request of this node (src/journalRules/providerSilence.ts).
   */
  providerSilentFor(batchId: number, attempts: number): Awaitable<boolean>;
  /** Requests started after `sinceMs` that may have sent their numbers (a message window). */
  recentStarts(sinceMs: number): Awaitable<{ at: number; numbers: number }[]>;
  /** True while writes wait for their transaction (at the next turn of the event loop). */
  writesPending(): boolean;
  /**
   * Files read in whole (status sending) with batches due now that no live node holds, or left
   * `sending` by a node whose lease passed: work this node may take up for files other nodes
   * read (daemon/helpOtherNodes.ts). Only a journal shared by several processes has it.
   */
  filesWithWork?(limit: number): Promise<number[]>;
  /**
   * `listener` is told what this process gave up of a batch another process took over (an outcome
   * the journal refused because its claim passed): handed on, never a failure of the file. Only a
   * journal shared by several processes has it.
   */
  whenHandedOn?(listener: (what: string) => void): void;
  /**
   * `listener` is told when this process takes over batches another process held and let pass
   * (it died, or was cut off past its lease): the operator's log line and webhook event. Only a
   * journal shared by several processes has it.
   */
  whenTakenOver?(listener: (takeover: TakeOver) => void): void;
  /**
   * Whether the request of a batch whose attempt started may still leave now, asked as it is about
   * to be written: a node of a cluster, by its own monotonic clock, whether its lease still holds.
   * None: always.
   */
  mayStillStart?(batchId: number): boolean;
  /**
   * Gives up this process's claims of batches with no request in flight, for the other processes
   * to send (this one paused alone: the provider does not answer it). Only a shared journal has it.
   */
  handBack?(): Promise<void>;
  /**
   * Gives up this process's claims of these batches where no attempt of theirs is under way: a
   * pass over a file that ends (a failure, a stop, a pause) with claimed batches it did not send
   * lets the other processes send them. Only a shared journal has it.
   */
  releaseClaims?(batchIds: readonly number[]): Promise<void>;
}

/** Work one process took over from another whose claim passed (SendStore and FileStore tell it). */
export interface TakeOver {
  fileId: number;
  /** The process that held it. */
  from: string;
  /** How many of the file's batches; the file's reading itself: 'reading'. */
  what: number | 'reading';
}
