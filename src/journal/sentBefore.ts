// Messages other files of the journal already sent to a number, or will send: so that the same
// rows given again as other bytes do not send the same message to the same number twice. Excel
// saves an unchanged list with other line endings, quoting or encoding; a list gets rows added and
// is dropped again; an export is re-imported. Each is a new file (a file is its bytes), and
// without this each would send its rows again.
//
// "The same message" is a group's key: app, template and values. A row of an earlier file counts
// when its batch may have reached the provider or still will:
//   - accepted or unknown, by a request started within the repeat window (SMSDROP_REPEAT_WINDOW,
//     24 h by default: a list meant to be sent again the next day is sent);
//   - sending (a request in flight, or cut off by a crash: in doubt), whenever it started;
//   - planned in a file still being sent (status sending): it will go, whenever that file goes on;
//   - planned with an attempt behind it, or split from one, in any file: the file's intake keeps
//     such a batch when it is read again (restartIntake), and sends it under its own reqId.
// The row is then left to that file, and that file's report has its outcome: should it end
// failed there, `smsdrop retry` of that file sends it. A failed number was not sent, so a file of
// failed rows, fixed and dropped again, sends them. The other planned batches of a file refused,
// or cut short during its intake, are not counted: that file's intake throws them away when it is
// read again, and sends those rows then if nothing else did.
//
// Intake asks once per group (the planner, when it loads a group), not per row: the groups of the
// window are read into a sorted array of key hashes when the writer starts, so a file with no group
// in common with the window's files pays a binary search per group. The numbers of a group found
// there are read once, into sorted arrays (a list of a million numbers: 16 MB, against ~70 MB as a
// Map).
import {
  firstAtLeast,
  numberKey,
  numberKeySql,
  sortedSentBefore,
} from '../journalRules/numberKeys.js';
import { countedByRepeatWindow } from '../journalRules/files.js';
import type { RepeatWindow } from '../config/settings/durations.js';
import type { SentBefore, SentBeforeLookup } from '../ports/plan.js';
import type { Journal } from './connection.js';
import { sqlRaw, sqlPluck } from './sql.js';
import { sqlList, UNSETTLED_STATES } from '../ports/states.js';

/** Batches whose rows count, for `b` joined to its file `f` (see the top of this file). */
const COUNTS = countedByRepeatWindow(':since');

/**
 * The look-up for intake of file `fileId` (its own rows never count), or undefined when the window
 * is off. Reads the journal as it is now: intakes run one at a time (pipeline), so every other
 * file's rows are in it.
 */
export function sentBeforeLookup(
  db: Journal,
  fileId: number,
  window: RepeatWindow,
  now = Date.now(),
): SentBeforeLookup | undefined {
  if (window.ms <= 0) return undefined;
  const since = new Date(now - window.ms).toISOString();
  const groups = groupsOfWindow(db, fileId, since);
  if (groups.hashes.length === 0) return undefined;
  const groupById = sqlRaw(db, 'SELECT app_id, template_id, datas FROM groups WHERE id = ?');
  // A group the writer drops from its cache and loads again asks again: the large answers are
  // kept, so a busy group is not read and sorted anew (the small ones cost a look-up).
  const large = new Map<string, SentBefore>();
  return (keyHash, appId, templateId, datasJson) => {
    const matching: number[] = [];
    for (
      let i = firstAtLeast(groups.hashes, keyHash);
      i < groups.hashes.length && groups.hashes[i] === keyHash;
      i++
    ) {
      const id = groups.ids[i]!;
      const [app, template, datas] = groupById.get(id) as [string, string, string];
      if (app === appId && template === templateId && datas === datasJson) matching.push(id);
    }
    if (matching.length === 0) return undefined;
    const key = matching.join(',');
    const known = large.get(key);
    if (known) return known;
    const found = numbersOf(db, matching, since);
    if (found.size > FEW) large.set(key, found);
    return found;
  };
}

/** Groups of other files with rows that count, sorted by key hash. */
function groupsOfWindow(
  db: Journal,
  fileId: number,
  since: string,
): { hashes: Float64Array; ids: Float64Array } {
  // Two ways in, each by an index: recent attempts (attempts_by_start), and the batches not final
  // of files not done (few files; batches_by_file). Not a scan of every batch ever made. A superset
  // of the groups COUNTS finds rows of: numbersOf decides.
  const rows = sqlRaw(
    db,
    `SELECT g.key_hash, g.id FROM groups g WHERE g.file_id != :file AND g.id IN (
       SELECT b.group_id FROM attempts a INDEXED BY attempts_by_start JOIN batches b ON b.id = a.batch_id
       WHERE a.started_at >= :since
       UNION
       SELECT b.group_id FROM files f JOIN batches b ON b.file_id = f.id
       WHERE f.status != 'done' AND b.state IN ${sqlList(UNSETTLED_STATES)}
     ) ORDER BY g.key_hash`,
  ).iterate({ file: fileId, since }) as Iterable<[number, number]>;
  const hashes: number[] = [];
  const ids: number[] = [];
  for (const [hash, id] of rows) {
    hashes.push(hash);
    ids.push(id);
  }
  return { hashes: Float64Array.from(hashes), ids: Float64Array.from(ids) };
}

/**
 * The counted rows of these groups, by number. A normalised number (intake/phone.ts) is 11 digits
 * (mainland) or 00 and at most 15 digits: as a double, exact, the first below 2e10 and the second
 * (without its 00) put above 2^52, so the two kinds never meet. SQLite makes the keys and sorts
 * them: no string per row, and no sort in JS.
 */
function numbersOf(db: Journal, groupIds: number[], since: string): SentBefore {
  const from = `FROM batches b JOIN files f ON f.id = b.file_id
       JOIN rows r INDEXED BY rows_by_batch ON r.batch_id = b.id
     WHERE b.group_id IN (SELECT value FROM json_each(:groups)) AND r.intake = 'valid' AND ${COUNTS}`;
  const params = { groups: JSON.stringify(groupIds), since };
  // Counted first, so the arrays are made to size: grown by doubling, they held up to twice the
  // room.
  const count = sqlPluck(db, `SELECT count(*) ${from}`).get(params) as number;
  const rows = sqlRaw(
    db,
    `SELECT ${numberKeySql('r.phone')} AS key, r.id
     ${from} ORDER BY key`,
  ).iterate(params) as Iterable<[number, number]>;
  const keys = new Float64Array(count);
  const rowIds = new Float64Array(count);
  let at = 0;
  for (const [key, id] of rows) {
    if (at === count) break; // the two statements run back to back: nothing is written between them
    keys[at] = key;
    rowIds[at++] = id;
  }
  if (count <= FEW) return fewNumbers(Array.from(keys), Array.from(rowIds));
  return sortedSentBefore(keys, rowIds);
}

/**
 * Up to this many numbers, a group's are searched one by one: a personalised list (a message per
 * row) has thousands of one-number groups, and four typed arrays each (an ArrayBuffer apiece) cost
 * ~40 MB for 20,000 of them, against ~2 MB as small arrays.
 */
const FEW = 16;

function fewNumbers(keys: number[], rowIds: number[]): SentBefore {
  return {
    size: keys.length,
    rowOf(phone) {
      const key = numberKey(phone);
      const at = key === undefined ? -1 : keys.indexOf(key);
      return at === -1 ? undefined : rowIds[at];
    },
  };
}
