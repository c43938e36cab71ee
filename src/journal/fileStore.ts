// FileStore on the SQLite journal: thin delegates to files.ts and its neighbours.
import { SmsdropError } from '../errors.js';
import { commitBulk } from './bulk.js';
import {
  adoptGrownFile,
  attemptsOf,
  createFile,
  createFileUnlessRecorded,
  discardIntake,
  lastProgressAt,
  noteTaken,
  recountFile,
  restartIntake,
  setFileEncoding,
  setFileProvider,
  setFileStatus,
  unfinishedWithSends,
  waitingRepeats,
} from './files.js';
import { countFile, findLatestFile, getFile } from './fileReads.js';
import { replayIntents } from './intents.js';
import type { Journal } from './connection.js';
import { JournalPlanStore } from './planStore.js';
import { planSummary } from './reportReads.js';
import type { FileStore } from '../ports/files.js';
import type { FileCounts, FileRecord, KeptRows, NewFile, WaitingFile } from '../ports/records.js';
import { FILE_STATUS, type FileStatus } from '../ports/states.js';
import { endRun, noteReadBytes, startRun } from '../journalRules/runs.js';
import { runRule, SQLITE_DIALECT } from './rules.js';
import { nowIso } from './sql.js';
import { writeQueueFor } from './writeQueue.js';
import type { PlanStore } from '../ports/plan.js';

export class SqliteFileStore implements FileStore {
  readonly #db: Journal;

  constructor(db: Journal) {
    this.#db = db;
  }

  identify(sha256: string): FileRecord | undefined {
    return findLatestFile(this.#db, sha256);
  }
  file(id: number): FileRecord | undefined {
    return getFile(this.#db, id);
  }
  grownCandidates(size: number): FileRecord[] {
    return unfinishedWithSends(this.#db, size);
  }
  create(file: NewFile): FileRecord {
    return createFile(this.#db, file);
  }
  createUnlessRecorded(file: NewFile, seen: number): FileRecord | undefined {
    return createFileUnlessRecorded(this.#db, file, seen);
  }
  adopt(id: number, file: NewFile): FileRecord {
    return adoptGrownFile(this.#db, id, file);
  }
  noteTaken(sha256: string): void {
    noteTaken(this.#db, sha256);
  }
  setProvider(id: number, provider: string): void {
    setFileProvider(this.#db, id, provider);
  }
  setEncoding(id: number, encoding: string): void {
    setFileEncoding(this.#db, id, encoding);
  }

  // One process writes this journal (it holds the data directory's lock), and the pipeline never
  // runs one file twice at once (FilesInProgress): every file is this process's to run.
  claim(): undefined {
    return undefined;
  }
  unclaim(): void {}

  // Only this process writes the journal: its IntakeTurns already order every intake.
  intakeTurn(): Promise<() => Promise<void>> {
    return Promise.resolve(() => Promise.resolve());
  }

  beginIntake(id: number): KeptRows {
    const kept = restartIntake(this.#db, id);
    setFileStatus(this.#db, id, FILE_STATUS.intake);
    return kept;
  }

  planStore(id: number): PlanStore {
    return new JournalPlanStore(this.#db, id);
  }

  status(id: number, to: FileStatus, error?: string): Promise<void> {
    return settled(() => {
      setFileStatus(this.#db, id, to, error);
      // Another file's intake may hold the journal's transaction open (intents.ts): a file done
      // is committed now, so that it is done for good before the caller files it away.
      if (to === FILE_STATUS.done) commitBulk(this.#db);
    });
  }

  refuse(
    id: number,
    explain: (requestsSent: number) => string,
  ): Promise<{ requestsSent: number; reason: string }> {
    return settled(() => this.#refuse(id, explain));
  }

  #refuse(
    id: number,
    explain: (requestsSent: number) => string,
  ): { requestsSent: number; reason: string } {
    // A journal that rolled back its open transaction lost attempts that intents still name. (Its
    // other writes committed first: replay reads the journal as committed.)
    commitBulk(this.#db);
    replayIntents(this.#db);
    const requestsSent = attemptsOf(this.#db, id);
    const reason = explain(requestsSent);
    // Nothing sent: the rows go, as if never read. Something sent: what was read is kept, so the
    // counts must add up.
    if (requestsSent === 0) discardIntake(this.#db, id);
    else recountFile(this.#db, id);
    setFileStatus(this.#db, id, FILE_STATUS.refused, reason);
    return { requestsSent, reason };
  }

  // Through the write queue: another file's intake may hold the journal's transaction (its
  // thread's, or the bulk one), which the queue waits its turn for.
  runStarted(id: number): Promise<void> {
    return writeQueueFor(this.#db).run(() =>
      runRule(this.#db, startRun(SQLITE_DIALECT, id, nowIso())),
    );
  }
  runEnded(id: number): Promise<void> {
    return writeQueueFor(this.#db).run(() => runRule(this.#db, endRun(id, nowIso())));
  }
  noteReadBytes(id: number, bytes: number): Promise<void> {
    return writeQueueFor(this.#db).run(() => runRule(this.#db, noteReadBytes(id, bytes)));
  }

  counts(id: number): FileCounts {
    return countFile(this.#db, id);
  }
  waitingRepeats(id: number): WaitingFile[] {
    return waitingRepeats(this.#db, id);
  }
  requestsMade(id: number): number {
    return attemptsOf(this.#db, id);
  }

  lateness(id: number): { lastProgressAt: string; requestsMade: number } {
    const file = getFile(this.#db, id);
    if (!file) throw new SmsdropError('E_INTERNAL', `file ${id} is not in the journal`);
    return {
      lastProgressAt: lastProgressAt(this.#db, file),
      requestsMade: attemptsOf(this.#db, id),
    };
  }

  planSummary(id: number): { groups: number; requests: number; numbers: number } {
    return planSummary(this.#db, id);
  }
}

/** `write`'s result as a promise: what it throws becomes the rejection. */
function settled<T>(write: () => T): Promise<T> {
  return new Promise<T>((resolve) => resolve(write()));
}
