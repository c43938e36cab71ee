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
// Intake asks only about its own messages and numbers (journalRules/sentBefore.ts): for each group
// it loads, the other files' groups of that message, through an index on their key hash; for a
// message found there, the numbers of each chunk (~100 rows) at once, before the chunk is planned,
// through an index on the rows' groups and numbers (prepareNumbers: one statement a chunk, not one
// a row).
// Nothing of the history is loaded.
import {
  earlierOf,
  earlierRowsOfAsks,
  earlierRowsOfPairs,
  type EarlierGroup,
  type EarlierRow,
  groupsByHash,
  idsOfMessage,
  windowHoldsRows,
} from '../journalRules/sentBefore.js';
import type { RepeatWindow } from '../config/settings/durations.js';
import type { SentBefore, SentBeforeLookup } from '../ports/plan.js';
import type { Journal } from './connection.js';
import { runRule, SQLITE_DIALECT as d } from './rules.js';

/**
 * Key hashes whose groups are kept: the chunk's look-ups before it is planned are asked again
 * when the planner loads its groups.
 */
const HASHES_KEPT = 1_000;

/**
 * The look-up for intake of file `fileId` (its own rows never count), or undefined when the window
 * is off or no other file holds rows it counts. Reads the journal as it is now: intakes run one at
 * a time (pipeline), so every other file's rows are in it.
 */
export function sentBeforeLookup(
  db: Journal,
  fileId: number,
  window: RepeatWindow,
  now = Date.now(),
): SentBeforeLookup | undefined {
  if (window.ms <= 0) return undefined;
  const since = new Date(now - window.ms).toISOString();
  if (!runRule(db, windowHoldsRows(d, fileId, since))) return undefined;
  const byHash = new Map<number, EarlierGroup[]>();
  const groupsOf = (keyHash: number): EarlierGroup[] => {
    const known = byHash.get(keyHash);
    if (known) return known;
    const groups = runRule(db, groupsByHash(d, fileId, [keyHash]));
    byHash.set(keyHash, groups);
    if (byHash.size > HASHES_KEPT) byHash.delete(byHash.keys().next().value!);
    return groups;
  };
  let answers = new Map<string, EarlierRow[]>();
  // A number not prepared (a retry's, or asked outside a chunk) is asked on its own.
  const rowsOf = (phone: string, ids: readonly number[]) =>
    answers.get(phone) ??
    runRule(
      db,
      earlierRowsOfPairs(
        d,
        ids.map((id) => [phone, id] as const),
        since,
      ),
    );
  const lookup = (keyHash: number, appId: string, templateId: string, datasJson: string) => {
    const ids = idsOfMessage(groupsOf(keyHash), appId, templateId, datasJson);
    return ids.length === 0 ? undefined : earlierOf(ids, rowsOf);
  };
  return Object.assign(lookup, {
    prepareNumbers(asks: ReadonlyArray<readonly [SentBefore, string]>): void {
      answers = runRule(db, earlierRowsOfAsks(d, asks, since));
    },
  });
}
