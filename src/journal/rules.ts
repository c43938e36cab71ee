// The journal rules (src/journalRules/) run on SQLite: each statement prepared once per connection
// and text (sql.ts), answered at once, inside whatever transaction the caller holds.
import type { Dialect, Param, Rule } from '../journalRules/rule.js';
import { runNow } from '../journalRules/rule.js';
import type { RuleContext } from '../journalRules/outcomes.js';
import { insideOf, type Journal } from './connection.js';
import { sql } from './sql.js';

/** An smsMessageSid kept as its bytes: read back as lowercase hex, it is the same text. */
const HEX_SID = /^[0-9a-f]{32}$/;
/**
 * A dateCreated kept as bytes, two digits a byte (its digits read as hex): a TEXT column would turn
 * an integer back into text.
 */
const STAMP = /^[0-9]{14}$/;

/** SQLite's spelling: lists travel as one JSON text, read by json_each. */
export const SQLITE_DIALECT: Dialect = {
  greatest: (a, b) => `max(${a}, ${b})`,
  isIn: (column) => `${column} IN (SELECT value FROM json_each(?))`,
  isInIds: (column) => `${column} IN (SELECT value FROM json_each(?))`,
  // Each column IN its list: the planner seeks an index on the two for every id and text. (The
  // lists zipped, as `pairs` makes them, would be a join it scans the second list for each row of
  // the first.)
  isInPairs: (ids, texts) =>
    `(${ids} IN (SELECT value FROM json_each(?)) AND ${texts} IN (SELECT value FROM json_each(?)))`,
  list: (values) => JSON.stringify(values),
  pairs: (a, b) =>
    `(SELECT j.value AS ${a}, k.value AS ${b} FROM json_each(?) j JOIN json_each(?) k ON k.key = j.key) AS t`,
  // A write transaction holds the whole journal: nothing to lock row by row.
  forUpdate: '',
  forShare: '',
  skipLocked: '',
  // text compares by its bytes unless told otherwise
  byBytes: '',
  // Both exact to the millisecond: timeText(storedTime(t)) is t for every time nowIso writes.
  storedTime: (value) => `CAST(round((julianday(${value}) - 2440587.5) * 86400000) AS INTEGER)`,
  timeText: (column) => `strftime('%Y-%m-%dT%H:%M:%fZ', ${column} / 1000.0, 'unixepoch')`,
  storedSid: (sid) => (sid !== null && HEX_SID.test(sid) ? Buffer.from(sid, 'hex') : sid),
  sidText: (column) =>
    `CASE WHEN typeof(${column}) = 'blob' THEN lower(hex(${column})) ELSE ${column} END`,
  storedStamp: (stamp) => (stamp !== null && STAMP.test(stamp) ? Buffer.from(stamp, 'hex') : stamp),
  stampText: (column) =>
    `CASE WHEN typeof(${column}) = 'blob' THEN hex(${column}) ELSE ${column} END`,
  appOf: (group) => `coalesce((SELECT app_id FROM apps WHERE id = ${group}.app), ${group}.app_id)`,
  batchPhones: (b) =>
    `coalesce((SELECT phones FROM batch_numbers WHERE batch_id = ${b}.id),
      CASE WHEN ${b}.numbers = 1 THEN (SELECT phone FROM rows WHERE batch_id = ${b}.id LIMIT 1) END)`,
  storedNode: (node) => `(SELECT id FROM processes WHERE name = ${node})`,
  indexedBy: (index) => ` INDEXED BY ${index}`,
  writesInWith: false,
};

/** What the SQLite journal gives its rules: one writer per journal, so no guard of its own. */
export const SQLITE_RULES: RuleContext = { dialect: SQLITE_DIALECT };

type Bound = (string | number | null)[];

/** Runs a rule to its end on this connection. */
export function runRule<T>(db: Journal, rule: Rule<T>): T {
  return runNow(rule, {
    run: (text: string, params: Param[]) => sql(db, text).run(...(params as Bound)).changes,
    all: (text: string, params: Param[]) => sql(db, text).all(...(params as Bound)),
    get: (text: string, params: Param[]) => sql(db, text).get(...(params as Bound)),
    durable: () => needsJournalCommit(db),
  });
}

/**
 * A write of this turn created batches (split halves, a retry's): they must be committed in the
 * journal itself before anyone sends them, not only noted in the intents' side file (intents.ts).
 */
function needsJournalCommit(db: Journal): void {
  const log = insideOf(db).intents;
  if (log) log.mustCommit = true;
}
