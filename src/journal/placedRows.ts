// Which of a file's doubts (plan/doubts.ts) its group already has in a batch: the one read that
// goes over all the file's rows, at the end of its intake. No index has rows by number (a unique
// one costs a third of intake's time), so the rows are read in id order against a temporary table
// of the doubts: a pass over every row, which would hold up the answers in flight if the main
// thread made it in one go.
//
// The process that sends has the journal's thread (checkpoints.ts): the rows are committed, and
// the thread reads them while the main thread goes on with the answers. Without it, or should it
// fail, a large file is read here a page at a time, with a turn of the event loop between pages.
import { setImmediate as nextTurn } from 'node:timers/promises';
import { SmsdropError } from '../errors.js';
import { commitBulk } from './bulk.js';
import { askThread, checkpointsOnThread } from './checkpoints.js';
import { connectionOf, insideOf, type Journal, type PlacedRow } from './connection.js';
import { keysTable, type DoubtKey, type PlacedRowsRequest } from './placedRowsSql.js';
import { fileRowSpan } from './rowSpan.js';
import type { PlacedKey } from '../ports/plan.js';

export type { PlacedRow };

/** Rows read between two turns of the event loop: ~10 ms of work. */
export const ROWS_PER_PAGE = 20_000;
/** Rows the journal's thread reads per request: it has no event loop to give turns to. */
const THREAD_ROWS_PER_PAGE = 200_000;

type Span = { first: number; last: number };

/**
 * The file's placed rows matching `keys`: at once when its rows span less than a page of ids, else
 * on the journal's thread, or a page at a time with a turn of the event loop after each page.
 * The thread reads only committed rows: the open bulk transaction is committed first.
 */
export function placedRows(
  db: Journal,
  fileId: number,
  keys: Iterable<PlacedKey>,
): PlacedRow[] | Promise<PlacedRow[]> {
  const span = fileRowSpan(db, fileId);
  if (span === undefined) return [];
  const doubts = Array.from(keys, ({ groupId, phone }): DoubtKey => [groupId, phone]);
  if (span.last - span.first < ROWS_PER_PAGE) return atOnce(db, fileId, doubts, span);
  if (!checkpointsOnThread(db)) return inPages(db, fileId, doubts, span);
  commitBulk(db);
  return onThread(db, fileId, doubts, span).catch(() => inPages(db, fileId, doubts, span));
}

/** The look-up on the journal's own connection: its table of doubts, filled. */
function lookupHere(db: Journal, fileId: number, doubts: readonly DoubtKey[]) {
  const table = keysTable(
    connectionOf(db),
    insideOf(db).temporaryTableName(`doubt_keys_${fileId}`),
  );
  table.add(doubts);
  return table;
}

function atOnce(db: Journal, fileId: number, doubts: readonly DoubtKey[], span: Span) {
  const lookup = lookupHere(db, fileId, doubts);
  try {
    return lookup.between(fileId, span.first, span.last);
  } finally {
    lookup.drop();
  }
}

async function inPages(
  db: Journal,
  fileId: number,
  doubts: readonly DoubtKey[],
  span: Span,
): Promise<PlacedRow[]> {
  const lookup = lookupHere(db, fileId, doubts);
  try {
    const placed: PlacedRow[] = [];
    for (let first = span.first; first <= span.last; first += ROWS_PER_PAGE) {
      for (const row of lookup.between(fileId, first, first + ROWS_PER_PAGE - 1)) placed.push(row);
      await nextTurn();
    }
    return placed;
  } finally {
    lookup.drop();
  }
}

/** The look-up on the journal's thread: its own table of doubts, then the pages. */
async function onThread(
  db: Journal,
  fileId: number,
  doubts: readonly DoubtKey[],
  span: Span,
): Promise<PlacedRow[]> {
  const table = insideOf(db).temporaryTableName(`doubt_keys_${fileId}`);
  const ask = (request: PlacedRowsRequest): Promise<PlacedRow[]> =>
    askThread(db, request) ??
    Promise.reject(new SmsdropError('E_INTERNAL', 'the journal has no thread now'));
  try {
    let at = 0;
    do await ask({ op: 'keys', table, keys: doubts.slice(at, (at += ROWS_PER_PAGE)) });
    while (at < doubts.length);
    const placed: PlacedRow[] = [];
    for (let first = span.first; first <= span.last; first += THREAD_ROWS_PER_PAGE) {
      const last = first + THREAD_ROWS_PER_PAGE - 1;
      for (const row of await ask({ op: 'between', table, fileId, first, last })) placed.push(row);
    }
    return placed;
  } finally {
    // Not awaited: a thread that failed may not answer, and its table goes with it.
    ask({ op: 'drop', table }).catch(() => {});
  }
}
