// ReadStore on the SQLite journal: thin delegates to reportReads.ts and its neighbours. The row
// iterators are handed out a page at a time.
import type { RepeatWindow } from '../config/settings/durations.js';
import { getDaemonState } from './daemonState.js';
import { getFile } from './fileReads.js';
import { journalLost } from './intents.js';
import type { Journal } from './connection.js';
import * as reads from './reportReads.js';
import * as resultRows from './resultRows.js';
import { sentBeforeLookup } from './sentBefore.js';
import { journalSize } from './storage.js';
import { listSuppressed } from './suppression.js';
import type { Pages } from '../ports/awaitable.js';
import type { ReadStore } from '../ports/reads.js';
import type {
  DaemonState,
  FileRecord,
  GroupToSend,
  JournalSize,
  RecipientRow,
  SentBeforeLookup,
} from '../ports/records.js';

/** Rows per page of an iterator: one array of this many at a time, never the whole list. */
const PAGE_ROWS = 500;

/** `rows` a page at a time. */
export function* pagesOf<T>(rows: Iterable<T>, size = PAGE_ROWS): Generator<readonly T[]> {
  let page: T[] = [];
  for (const row of rows) {
    page.push(row);
    if (page.length >= size) {
      yield page;
      page = [];
    }
  }
  if (page.length > 0) yield page;
}

type Delegated = Omit<
  ReadStore,
  | 'file'
  | 'sentBefore'
  | 'daemonState'
  | 'size'
  | 'health'
  | 'nodes'
  | 'recipients'
  | 'groupsToSend'
>;

/** reportReads.ts's verbs on this journal (same names, without the journal). */
function readsOn(db: Journal): Delegated {
  return {
    filesNamed: (name) => reads.filesNamed(db, name),
    filesByShaPrefix: (prefix) => reads.filesByShaPrefix(db, prefix),
    listFiles: () => reads.listFiles(db),
    prunedFileIds: () => reads.prunedFileIds(db),
    fileLine: (fileId) => reads.fileLine(db, fileId),
    repeatsOf: (fileId) => reads.repeatsOf(db, fileId),
    failureCounts: (fileId) => reads.failureCounts(db, fileId),
    invalidReasons: (fileId, limit) => reads.invalidReasons(db, fileId, limit),
    invalidRows: (fileId, limit) => reads.invalidRows(db, fileId, limit),
    requestTiming: (fileId) => reads.requestTiming(db, fileId),
    unevenValueCounts: (fileId) => reads.unevenValueCounts(db, fileId),
    unfinishedFileLines: () => reads.unfinishedFileLines(db),
    requestsFinishedSince: (since) => reads.requestsFinishedSince(db, since),
    answersWithCodesSince: (codes, since) => reads.answersWithCodesSince(db, codes, since),
    numbersSettledSince: (fileId, since) => reads.numbersSettledSince(db, fileId, since),
    inFlight: (fileId) => reads.inFlight(db, fileId),
    lastAnswer: () => reads.lastAnswer(db),
    oldestHeldFile: () => reads.oldestHeldFile(db),
    prunedFileCount: () => reads.prunedFileCount(db),
    filesByStatus: () => reads.filesByStatus(db),
    filesWaiting: (now) => reads.filesWaiting(db, now),
    rowsByStatus: () => reads.rowsByStatus(db),
    numbersByOutcome: () => reads.numbersByOutcome(db),
    requestsByOutcome: () => reads.requestsByOutcome(db),
    sendRateByMinute: (since) => reads.sendRateByMinute(db, since),
    numbersToSend: (sha256s) => reads.numbersToSend(db, sha256s),
    mostValues: (fileId) => reads.mostValues(db, fileId),
    recordsOfBytes: (sha256) => reads.recordsOfBytes(db, sha256),
    suppressedNumbers: () => listSuppressed(db),
    resultPages: (fileId, format) => resultRows.resultPages(db, fileId, format),
    resultsStamp: (fileId) => resultRows.resultsStamp(db, fileId),
    rejectedRows: (fileId) => resultRows.rejectedRows(db, fileId),
    rejectedHeader: (fileId) => resultRows.rejectedHeader(db, fileId),
  };
}

/** The ReadStore of one open journal (writable or read-only). */
export function sqliteReadStore(db: Journal): ReadStore {
  return {
    ...readsOn(db),
    file: (id: number): FileRecord | undefined => getFile(db, id),
    sentBefore: (fileId: number, window: RepeatWindow): SentBeforeLookup | undefined =>
      sentBeforeLookup(db, fileId, window),
    daemonState: (): DaemonState | undefined => getDaemonState(db),
    size: (): JournalSize => journalSize(db),
    health: () => (!db.open ? 'closed' : journalLost(db) ? 'lost' : 'writable'),
    // One server: its one daemon holds the data directory's lock (status shows it), no nodes.
    nodes: () => [],
    recipients: (fileId: number, statuses: readonly string[]): Pages<RecipientRow> =>
      pagesOf(reads.recipients(db, fileId, statuses)),
    groupsToSend: (fileId: number): Pages<GroupToSend> => pagesOf(reads.groupsToSend(db, fileId)),
  };
}
