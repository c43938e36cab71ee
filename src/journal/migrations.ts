// Versioned schema of the journal. Each migration runs once, in order, in its own transaction;
// schema_migrations records which ones ran. Never edit a migration that has shipped: add one.
// Over 400 lines only by the migrations' SQL, which stays as it shipped.
//
// Each row of a CSV is written ONCE, at intake: the journal is built so that sending never has to
// touch rows again. A row's outcome is its batch's outcome (one request, one answer), read
// through the view row_results.
//
// Tables
//   files     one per (content, generation): identity is the SHA-256 of the bytes. `generation`
//             goes up only with `send --resend`, so a re-dropped file is recognised, never resent.
//             rows / invalid / duplicates are counted at the end of intake.
//   groups    rows sharing (app, template, values) within a file: one template message.
//   rows      one per data row of the CSV. `intake` is valid, invalid (with `error`) or
//             duplicate (of `duplicate_of`); a valid row belongs to one batch at a time.
//   batches   one request's worth of numbers (<= maxPerRequest distinct numbers of one group),
//             written during intake, before any request. State machine: states.ts.
//   batch_numbers  a batch's numbers (`phones`, comma-separated, in row order), apart from the
//             batch so that the batches table stays small and quick to read.
//   attempts  every request made for a batch: written before the request, completed after it.
//
// Migration 2 (reports): the views operators query with the sqlite3 shell, the daemon's
// own state, and the indexes those reads need.
//   v_files        one row per file with its counts (they add up to rows) and requests made.
//   v_recipients   one row per input row: who, with what (datas and extras are JSON: the template
//                  values in order, the file's other columns by name), and what became of it.
//   v_failures     failed and unknown numbers per file, status and code: how many, a sample
//   message. daemon_state   one row the daemon keeps current (paused and why), read by `smsdrop
//   status`.
import { SENT_BY_A_FILE_READ_AGAIN, SENT_BY_ANOTHER_FILE } from '../ports/results.js';
import { HELD } from './batchNumbers.js';
import { KEY_HASH_NARROWED } from '../journalRules/sentBefore.js';
import {
  APPS_BY_REFERENCE,
  PROCESSES_BY_REFERENCE,
  ROW_RESULTS_AGAIN,
  recipientsView,
  TIMES_AS_MILLISECONDS,
} from './storedForms.js';

/**
 * The repeat window asks other files' rows of a file's own messages and numbers only
 * (journalRules/sentBefore.ts): a message's groups by its key hash, then a number's rows placed in
 * batches, each through an index, so a file's look-ups cost the same whatever the journal holds.
 * Version 21 replaces its rows' index (GROUP_FIRST_ROWS_INDEX).
 */
const REPEAT_LOOKUPS = `
  CREATE INDEX groups_by_hash ON groups (key_hash);
  CREATE INDEX rows_by_phone ON rows (phone, group_id) WHERE batch_id IS NOT NULL;
`;

/**
 * The rows placed in batches by group, then number: a file's groups are the journal's newest, so
 * its entries go at the index's end. Keyed by number first, each commit of an intake would write
 * leaves all over the index (a list's numbers are random), and a file would cost more the more
 * rows the journal holds. The look-up seeks a chunk's numbers in the groups of its messages
 * (journalRules/sentBefore.ts).
 */
const GROUP_FIRST_ROWS_INDEX = `
  DROP INDEX rows_by_phone;
  CREATE INDEX rows_by_group_phone ON rows (group_id, phone) WHERE batch_id IS NOT NULL;
`;

/**
 * A group is looked up by its key hash (in its own file: the planner's findGroup; in others: the
 * repeat window), or read with its file's (reports, prune, export). One index by key hash, then
 * file, serves both look-ups by hash; one by file alone, the reads by file: 7 bytes a group less
 * than an index by file, then hash, beside the one by hash.
 */
const GROUPS_BY_HASH_AND_FILE = `
  DROP INDEX IF EXISTS groups_by_key;
  DROP INDEX groups_by_hash;
  CREATE INDEX groups_by_hash ON groups (key_hash, file_id);
  CREATE INDEX groups_by_file ON groups (file_id);
`;

/**
 * A group's batches are looked up for one thing: the batch intake still fills (planStore.ts,
 * heldBatchOf), which the end of its file releases. Only those are indexed by group, so the index
 * holds the batches of the files being read, not one entry for every batch ever planned. (A
 * group's deletion would look its batches up by group too; prune deletes them first, with the
 * check off: prune.ts.)
 */
const HELD_BATCHES_BY_GROUP = `
  DROP INDEX batches_by_group;
  CREATE INDEX batches_held ON batches (group_id) WHERE next_attempt_at = ${HELD};
`;

export const MIGRATIONS: ReadonlyArray<{ version: number; name: string; sql: string }> = [
  {
    version: 1,
    name: 'files, groups, rows, batches, attempts, row_results',
    sql: `
      CREATE TABLE files (
        id            INTEGER PRIMARY KEY,
        sha256        TEXT    NOT NULL,
        generation    INTEGER NOT NULL DEFAULT 1,
        name          TEXT    NOT NULL,
        path          TEXT,
        size          INTEGER NOT NULL,
        encoding      TEXT    NOT NULL,
        status        TEXT    NOT NULL,
        error         TEXT,
        header        TEXT,
        rows          INTEGER NOT NULL DEFAULT 0,
        invalid       INTEGER NOT NULL DEFAULT 0,
        duplicates    INTEGER NOT NULL DEFAULT 0,
        created_at    TEXT    NOT NULL,
        started_at    TEXT,
        finished_at   TEXT,
        UNIQUE (sha256, generation)
      );

      CREATE TABLE groups (
        id            INTEGER PRIMARY KEY,
        file_id       INTEGER NOT NULL REFERENCES files(id),
        key_hash      INTEGER NOT NULL,
        app_id        TEXT    NOT NULL,
        template_id   TEXT    NOT NULL,
        datas         TEXT    NOT NULL
      );
      CREATE INDEX groups_by_key ON groups (file_id, key_hash);

      CREATE TABLE rows (
        id              INTEGER PRIMARY KEY,
        file_id         INTEGER NOT NULL REFERENCES files(id),
        line            INTEGER NOT NULL,
        phone_raw       TEXT    NOT NULL,
        phone           TEXT,
        group_id        INTEGER REFERENCES groups(id),
        intake          TEXT    NOT NULL,
        error           TEXT,
        duplicate_of    INTEGER,
        extras          TEXT,
        batch_id        INTEGER
      );
      CREATE INDEX rows_by_file ON rows (file_id);
      -- The same number twice in one group is sent once: one valid row per (group, number).
      CREATE UNIQUE INDEX rows_one_per_number ON rows (group_id, phone) WHERE intake = 'valid';

      CREATE TABLE batches (
        id              INTEGER PRIMARY KEY,
        file_id         INTEGER NOT NULL REFERENCES files(id),
        group_id        INTEGER NOT NULL REFERENCES groups(id),
        parent_id       INTEGER REFERENCES batches(id),
        req_id          TEXT    NOT NULL,
        numbers         INTEGER NOT NULL,
        state           TEXT    NOT NULL,
        attempts        INTEGER NOT NULL DEFAULT 0,
        deferrals       INTEGER NOT NULL DEFAULT 0,
        maybe_sent      INTEGER NOT NULL DEFAULT 0,
        first_doubt_at  TEXT,
        next_attempt_at INTEGER NOT NULL DEFAULT 0,
        status_code     TEXT,
        status_msg      TEXT,
        sms_message_sid TEXT,
        date_created    TEXT,
        created_at      TEXT    NOT NULL,
        updated_at      TEXT    NOT NULL
      );
      CREATE INDEX batches_by_file ON batches (file_id, state);
      CREATE INDEX batches_by_group ON batches (group_id);
      CREATE UNIQUE INDEX batches_by_req_id ON batches (req_id);

      CREATE TABLE batch_numbers (
        batch_id        INTEGER PRIMARY KEY REFERENCES batches(id),
        phones          TEXT    NOT NULL
      );

      CREATE TABLE attempts (
        id            INTEGER PRIMARY KEY,
        batch_id      INTEGER NOT NULL REFERENCES batches(id),
        req_id        TEXT,
        started_at    TEXT    NOT NULL,
        finished_at   TEXT,
        outcome       TEXT,
        status_code   TEXT,
        reason        TEXT
      );
      CREATE INDEX attempts_by_batch ON attempts (batch_id);

      -- Each row with its final status: invalid / duplicate from intake, otherwise its batch's
      -- outcome (pending while the batch is planned or sending).
      CREATE VIEW row_results AS
      SELECT r.id, r.file_id, r.line, r.phone_raw, r.phone, r.group_id, r.batch_id, r.extras, r.intake,
        CASE r.intake
          WHEN 'valid' THEN CASE WHEN b.state IN ('accepted', 'failed', 'unknown') THEN b.state ELSE 'pending' END
          ELSE r.intake
        END AS status,
        CASE WHEN r.intake = 'valid' THEN b.status_code END AS status_code,
        CASE r.intake
          WHEN 'invalid' THEN r.error
          WHEN 'duplicate' THEN 'duplicate of line ' || (SELECT o.line FROM rows o WHERE o.id = r.duplicate_of)
          ELSE b.status_msg
        END AS status_msg,
        b.sms_message_sid, b.date_created, b.updated_at
      FROM rows r LEFT JOIN batches b ON b.id = r.batch_id;
    `,
  },
  {
    version: 2,
    name: 'report views, daemon state',
    sql: `
      CREATE TABLE daemon_state (
        id            INTEGER PRIMARY KEY CHECK (id = 1),
        pid           INTEGER,
        paused        TEXT,
        paused_since  TEXT,
        updated_at    TEXT    NOT NULL
      );

      -- The current send rate (attempts finished in the last minute) without a scan.
      CREATE INDEX attempts_by_finished ON attempts (finished_at);
      -- Why rows were invalid, per file, without reading every row of the file.
      CREATE INDEX rows_invalid ON rows (file_id, error) WHERE intake = 'invalid';

      -- Counts from the file's counters and its batches (a few per thousand rows): a file of a
      -- million rows is summed without reading its rows. A valid row is in exactly one batch not
      -- replaced by others (split, retried), so the counts add up to rows. While intake runs, the
      -- rows read so far are counted directly.
      CREATE VIEW v_files AS
      SELECT f.id, f.name, f.sha256, f.status,
        CASE WHEN f.status = 'intake' THEN (SELECT count(*) FROM rows r WHERE r.file_id = f.id) ELSE f.rows END AS rows,
        f.invalid, f.duplicates,
        (SELECT coalesce(sum(b.numbers), 0) FROM batches b WHERE b.file_id = f.id AND b.state = 'accepted') AS accepted,
        (SELECT coalesce(sum(b.numbers), 0) FROM batches b WHERE b.file_id = f.id AND b.state = 'failed') AS failed,
        (SELECT coalesce(sum(b.numbers), 0) FROM batches b WHERE b.file_id = f.id AND b.state = 'unknown') AS unknown,
        (SELECT coalesce(sum(b.numbers), 0) FROM batches b WHERE b.file_id = f.id AND b.state IN ('planned', 'sending')) AS pending,
        (SELECT count(*) FROM batches b JOIN attempts a ON a.batch_id = b.id WHERE b.file_id = f.id) AS requests,
        f.started_at, f.finished_at
      FROM files f;

      -- attempts: the requests that carried the row's number: those of its batch and of the
      -- batches it moved from (split halves, retries), through batches.parent_id.
      CREATE VIEW v_recipients AS
      SELECT rr.id AS row_id, rr.file_id, f.name AS file_name, rr.line, rr.phone_raw, rr.phone,
        g.app_id, g.template_id, g.datas, rr.extras,
        rr.status, rr.status_code, rr.status_msg, rr.sms_message_sid, rr.date_created,
        (WITH RECURSIVE chain(id) AS (
           SELECT rr.batch_id
           UNION ALL
           SELECT b.parent_id FROM batches b JOIN chain c ON b.id = c.id WHERE b.parent_id IS NOT NULL
         ) SELECT count(*) FROM attempts a WHERE a.batch_id IN chain) AS attempts,
        rr.updated_at
      FROM row_results rr
      JOIN files f ON f.id = rr.file_id
      LEFT JOIN groups g ON g.id = rr.group_id;

      -- A batch's numbers share its outcome, so failures are summed over batches, not rows.
      CREATE VIEW v_failures AS
      SELECT b.file_id, f.name AS file_name, b.state AS status, b.status_code,
        sum(b.numbers) AS count, min(b.status_msg) AS sample_message
      FROM batches b
      JOIN files f ON f.id = b.file_id
      WHERE b.state IN ('failed', 'unknown')
      GROUP BY b.file_id, b.state, b.status_code;
    `,
  },
  {
    version: 3,
    name: 'suppressed numbers',
    sql: `
      -- Numbers not to send to: the provider answered them as blacklisted or unsubscribed, or
      -- someone listed them (smsdrop suppress). Intake rejects their rows before grouping, so they
      -- are not paid for, nor split out of a batch, again. A primary key: a blocklist of millions
      -- stays one indexed look-up per row.
      CREATE TABLE suppressed (
        phone TEXT PRIMARY KEY,
        reason TEXT NOT NULL,
        source TEXT NOT NULL,
        added_at TEXT NOT NULL
      ) WITHOUT ROWID;
    `,
  },
  {
    version: 4,
    name: 'no index of rows by number',
    sql: `
      -- A list's numbers come in no order, so rows_one_per_number put each row's entry on a page
      -- of its own and every commit rewrote most of it into the WAL: storing 1M random numbers
      -- took 10.3 s with it, 4.4 s without. Intake keeps one valid row per (group, number) itself
      -- (journal/rows.ts, seenNumbers.ts), and what looked rows up by number (a split moving its
      -- numbers to new batches) goes by batch instead.
      DROP INDEX IF EXISTS rows_one_per_number;
      CREATE INDEX IF NOT EXISTS rows_by_batch ON rows (batch_id) WHERE batch_id IS NOT NULL;
    `,
  },
  {
    version: 5,
    name: 'attempts by start',
    sql: `
      -- A message window (send/rate.ts) counts the numbers of requests started in its last span
      -- at start-up, so that a restart does not begin a fresh window: read by start, not a scan.
      CREATE INDEX IF NOT EXISTS attempts_by_start ON attempts (started_at);
    `,
  },
  {
    version: 6,
    name: 'daemon waiting for a rate limit',
    sql: `
      -- Why requests wait while sending is not paused (a message window used up), so that
      -- \`smsdrop status\` says so; null when nothing holds them.
      ALTER TABLE daemon_state ADD COLUMN waiting TEXT;
    `,
  },
  {
    version: 7,
    name: 'repeats of other files',
    sql: `
      -- A row whose number another file already sent the same message to, within the repeat
      -- window (sentBefore.ts), is a duplicate of that file's row. files.repeats counts those, out
      -- of files.duplicates; the view says which file and line.
      ALTER TABLE files ADD COLUMN repeats INTEGER NOT NULL DEFAULT 0;
      DROP VIEW row_results;
      CREATE VIEW row_results AS
      SELECT r.id, r.file_id, r.line, r.phone_raw, r.phone, r.group_id, r.batch_id, r.extras, r.intake,
        CASE r.intake
          WHEN 'valid' THEN CASE WHEN b.state IN ('accepted', 'failed', 'unknown') THEN b.state ELSE 'pending' END
          ELSE r.intake
        END AS status,
        CASE WHEN r.intake = 'valid' THEN b.status_code END AS status_code,
        CASE r.intake
          WHEN 'invalid' THEN r.error
          WHEN 'duplicate' THEN coalesce((
            SELECT CASE WHEN o.file_id = r.file_id THEN 'duplicate of line ' || o.line
              ELSE '${SENT_BY_ANOTHER_FILE}: line ' || o.line || ' of ' || f.name || ' (file ' || o.file_id || ')' END
            FROM rows o JOIN files f ON f.id = o.file_id WHERE o.id = r.duplicate_of), '${SENT_BY_A_FILE_READ_AGAIN}')
          ELSE b.status_msg
        END AS status_msg,
        b.sms_message_sid, b.date_created, b.updated_at
      FROM rows r LEFT JOIN batches b ON b.id = r.batch_id;
    `,
  },
  {
    version: 8,
    name: 'cells of invalid rows',
    sql: `
      -- An invalid row's cells as they were read, so that the rejected file gives back what the
      -- columns did not keep: the values of a row with no group (no template id), and the cells
      -- past the header. Invalid rows only: a few of a file's rows.
      CREATE TABLE invalid_cells (
        row_id INTEGER PRIMARY KEY,
        file_id INTEGER NOT NULL,
        cells TEXT NOT NULL
      );
      CREATE INDEX invalid_cells_by_file ON invalid_cells (file_id);
    `,
  },
  {
    version: 9,
    name: 'when a file was last taken',
    sql: `
      -- The daemon's last taking of a file from inbox/ (a file dropped again continues its first
      -- record): a file that stopped part-way resumes on its own only while it has moved lately,
      -- and a taking is a person asking for it now (daemon/lifecycle.ts, lateResume).
      ALTER TABLE files ADD COLUMN taken_at TEXT;
    `,
  },
  {
    version: 10,
    name: 'webhook outbox',
    sql: `
      -- Webhook events (outbox.ts), one row per event and receiver, written in the transaction of
      -- what they report, so that none is lost or made up by a crash; the daemon posts them in
      -- order and marks each delivered. \`target\` names the receiver by a hash of its URL (the
      -- URL carries secrets); \`body\` is the JSON as it is signed.
      CREATE TABLE webhook_outbox (
        id            INTEGER PRIMARY KEY,
        event         TEXT    NOT NULL,
        target        TEXT    NOT NULL,
        body          TEXT    NOT NULL,
        created_at    TEXT    NOT NULL,
        attempts      INTEGER NOT NULL DEFAULT 0,
        last_error    TEXT,
        delivered_at  TEXT
      );
      CREATE INDEX webhook_outbox_pending ON webhook_outbox (target, id) WHERE delivered_at IS NULL;
    `,
  },
  {
    version: 11,
    name: 'pruned files keep their counts',
    sql: `
      -- Pruning (prune.ts) deletes an ended file's rows, groups, batches and attempts, with every
      -- number and value in them, and keeps its files row: its name, sha256 and dates, so that
      -- \`smsdrop report\` still lists it and the same bytes dropped again are recognised. The
      -- counts v_files sums from batches are stored on the row first (pruned_at set in the same
      -- transaction); v_files reads them for a pruned file and sums as before for the others.
      ALTER TABLE files ADD COLUMN pruned_at TEXT;
      ALTER TABLE files ADD COLUMN kept_accepted INTEGER;
      ALTER TABLE files ADD COLUMN kept_failed INTEGER;
      ALTER TABLE files ADD COLUMN kept_unknown INTEGER;
      ALTER TABLE files ADD COLUMN kept_pending INTEGER;
      ALTER TABLE files ADD COLUMN kept_requests INTEGER;
      ALTER TABLE files ADD COLUMN kept_first_send TEXT;
      ALTER TABLE files ADD COLUMN kept_last_send TEXT;
      -- Files ended longest ago first, the ones not pruned yet: what pruning looks for each day.
      CREATE INDEX IF NOT EXISTS files_to_prune ON files (finished_at) WHERE pruned_at IS NULL;
      DROP VIEW v_files;
      CREATE VIEW v_files AS
      SELECT f.id, f.name, f.sha256, f.status,
        CASE WHEN f.status = 'intake' THEN (SELECT count(*) FROM rows r WHERE r.file_id = f.id) ELSE f.rows END AS rows,
        f.invalid, f.duplicates,
        CASE WHEN f.pruned_at IS NOT NULL THEN f.kept_accepted ELSE
          (SELECT coalesce(sum(b.numbers), 0) FROM batches b WHERE b.file_id = f.id AND b.state = 'accepted') END AS accepted,
        CASE WHEN f.pruned_at IS NOT NULL THEN f.kept_failed ELSE
          (SELECT coalesce(sum(b.numbers), 0) FROM batches b WHERE b.file_id = f.id AND b.state = 'failed') END AS failed,
        CASE WHEN f.pruned_at IS NOT NULL THEN f.kept_unknown ELSE
          (SELECT coalesce(sum(b.numbers), 0) FROM batches b WHERE b.file_id = f.id AND b.state = 'unknown') END AS unknown,
        CASE WHEN f.pruned_at IS NOT NULL THEN f.kept_pending ELSE
          (SELECT coalesce(sum(b.numbers), 0) FROM batches b WHERE b.file_id = f.id AND b.state IN ('planned', 'sending')) END AS pending,
        CASE WHEN f.pruned_at IS NOT NULL THEN f.kept_requests ELSE
          (SELECT count(*) FROM batches b JOIN attempts a ON a.batch_id = b.id WHERE b.file_id = f.id) END AS requests,
        f.started_at, f.finished_at
      FROM files f;
    `,
  },
  {
    version: 12,
    name: 'the provider a file was planned for',
    sql: `
      -- The provider and account a file was planned for: "host (account SID)", or "the built-in
      -- simulator" (never the token). A file is not resumed against another (E_PROVIDER_CHANGED):
      -- its rows would go from an account nobody meant, or, planned for the simulator, the rest of
      -- a list would reach people whose first part never did. Null: planned before this was recorded.
      ALTER TABLE files ADD COLUMN provider TEXT;
    `,
  },
  {
    version: 13,
    name: 'totals that pruning keeps',
    sql: `
      -- What pruned files had sent, summed, for /metrics' counters (smsdrop_numbers_total,
      -- smsdrop_requests_total), which must never go down: added to in the write that marks a file
      -- pruned (prune.ts markPruned), before its batches and attempts go. kind: 'numbers' (outcome
      -- by status code) or 'requests' (outcome, code '').
      CREATE TABLE pruned_totals (
        kind TEXT NOT NULL,
        outcome TEXT NOT NULL,
        code TEXT NOT NULL,
        count INTEGER NOT NULL,
        PRIMARY KEY (kind, outcome, code)
      ) WITHOUT ROWID;
    `,
  },
  {
    version: 14,
    name: 'the code of a pause',
    sql: `
      -- Why the daemon paused sending, as its stable code (docs/errors.md: E_PROVIDER_AUTH…),
      -- beside the text: smsdrop status shows it, and scripts match it.
      ALTER TABLE daemon_state ADD COLUMN paused_code TEXT;
    `,
  },
  {
    version: 15,
    name: "an operator's control of a file, and cancelled rows",
    sql: `
      -- An operator's hold on a file (ports/control.ts): control is held (waiting for approval),
      -- paused or cancelled, or null (it goes, from start_at on when that is set: scheduled);
      -- control_by and control_at say who set it last, and when. A cancelled file's planned
      -- batches end cancelled (a final state: never requested), and its rows with them.
      ALTER TABLE files ADD COLUMN control TEXT;
      ALTER TABLE files ADD COLUMN start_at TEXT;
      ALTER TABLE files ADD COLUMN control_by TEXT;
      ALTER TABLE files ADD COLUMN control_at TEXT;
      ALTER TABLE files ADD COLUMN kept_cancelled INTEGER;
      DROP VIEW row_results;
      CREATE VIEW row_results AS
      SELECT r.id, r.file_id, r.line, r.phone_raw, r.phone, r.group_id, r.batch_id, r.extras, r.intake,
        CASE r.intake
          WHEN 'valid' THEN CASE WHEN b.state IN ('accepted', 'failed', 'unknown', 'cancelled') THEN b.state ELSE 'pending' END
          ELSE r.intake
        END AS status,
        CASE WHEN r.intake = 'valid' THEN b.status_code END AS status_code,
        CASE r.intake
          WHEN 'invalid' THEN r.error
          WHEN 'duplicate' THEN coalesce((
            SELECT CASE WHEN o.file_id = r.file_id THEN 'duplicate of line ' || o.line
              ELSE '${SENT_BY_ANOTHER_FILE}: line ' || o.line || ' of ' || f.name || ' (file ' || o.file_id || ')' END
            FROM rows o JOIN files f ON f.id = o.file_id WHERE o.id = r.duplicate_of), '${SENT_BY_A_FILE_READ_AGAIN}')
          ELSE b.status_msg
        END AS status_msg,
        b.sms_message_sid, b.date_created, b.updated_at
      FROM rows r LEFT JOIN batches b ON b.id = r.batch_id;
      DROP VIEW v_files;
      CREATE VIEW v_files AS
      SELECT f.id, f.name, f.sha256, f.status,
        CASE WHEN f.status = 'intake' THEN (SELECT count(*) FROM rows r WHERE r.file_id = f.id) ELSE f.rows END AS rows,
        f.invalid, f.duplicates,
        CASE WHEN f.pruned_at IS NOT NULL THEN f.kept_accepted ELSE
          (SELECT coalesce(sum(b.numbers), 0) FROM batches b WHERE b.file_id = f.id AND b.state = 'accepted') END AS accepted,
        CASE WHEN f.pruned_at IS NOT NULL THEN f.kept_failed ELSE
          (SELECT coalesce(sum(b.numbers), 0) FROM batches b WHERE b.file_id = f.id AND b.state = 'failed') END AS failed,
        CASE WHEN f.pruned_at IS NOT NULL THEN f.kept_unknown ELSE
          (SELECT coalesce(sum(b.numbers), 0) FROM batches b WHERE b.file_id = f.id AND b.state = 'unknown') END AS unknown,
        CASE WHEN f.pruned_at IS NOT NULL THEN f.kept_pending ELSE
          (SELECT coalesce(sum(b.numbers), 0) FROM batches b WHERE b.file_id = f.id AND b.state IN ('planned', 'sending')) END AS pending,
        CASE WHEN f.pruned_at IS NOT NULL THEN f.kept_requests ELSE
          (SELECT count(*) FROM batches b JOIN attempts a ON a.batch_id = b.id WHERE b.file_id = f.id) END AS requests,
        f.started_at, f.finished_at,
        CASE WHEN f.pruned_at IS NOT NULL THEN coalesce(f.kept_cancelled, 0) ELSE
          (SELECT coalesce(sum(b.numbers), 0) FROM batches b WHERE b.file_id = f.id AND b.state = 'cancelled') END AS cancelled,
        f.control, f.start_at
      FROM files f;
      `,
  },
  {
    version: 16,
    name: "a file's reading and runs, for its progress and times",
    sql: `
      -- How far the file has been read, in bytes, while it is read: until its rows are counted,
      -- their number is estimated from it and the file's size (smsdrop status, the progress line).
      ALTER TABLE files ADD COLUMN read_bytes INTEGER;
      -- The time the runs that sent it (send, resume, retry, the daemon) took, summed over those
      -- that ended (ms); and the start of the run going on, or of one cut off (journalRules/runs.ts).
      ALTER TABLE files ADD COLUMN run_ms INTEGER NOT NULL DEFAULT 0;
      ALTER TABLE files ADD COLUMN run_started_at TEXT;
    `,
  },
  {
    version: 17,
    name: "a row's extras as cells, named once by its file",
    sql: `
      -- rows.extras holds the row's extra cells as a JSON array, in the order of the names in
      -- files.header's "extras" (journalRules/extras.ts), so that the names are kept once per file,
      -- not on every row; or, in rows intake wrote under migration 16 and earlier, an object by
      -- name. v_recipients gives either as the object by name.
      ${recipientsView('g.app_id')}
    `,
  },
  {
    version: 18,
    name: "the repeat window's look-ups by message and by number",
    sql: REPEAT_LOOKUPS,
  },
  {
    version: 19,
    name: "attempts' and batches' times as milliseconds, without batches_by_req_id",
    sql: TIMES_AS_MILLISECONDS,
  },
  {
    version: 20,
    name: 'the process that made each attempt',
    sql: `
      -- The process that made the attempt (host and pid: one server, but each start is another
      -- process); null for an attempt replayed from the intents after a crash, whose process is
      -- gone unnamed, and for those made before this column.
      ALTER TABLE attempts ADD COLUMN node TEXT;
    `,
  },
  {
    version: 21,
    name: "a message's rows by number, in an index that grows at its end",
    sql: GROUP_FIRST_ROWS_INDEX,
  },
  {
    version: 22,
    name: "an accepted batch's smsMessageSid and dateCreated as bytes",
    sql: ROW_RESULTS_AGAIN,
  },
  { version: 23, name: "each app id once, a group's app by reference", sql: APPS_BY_REFERENCE },
  { version: 24, name: 'a phone cell that is its number, kept once', sql: ROW_RESULTS_AGAIN },
  { version: 25, name: "a file's groups by key hash and by file", sql: GROUPS_BY_HASH_AND_FILE },
  { version: 26, name: "a group's batch intake still fills", sql: HELD_BATCHES_BY_GROUP },
  {
    version: 27,
    name: "each sending process once, an attempt's by reference",
    sql: PROCESSES_BY_REFERENCE,
  },
  {
    version: 28,
    name: "an accepted batch's code, the provider's success, not kept",
    sql: ROW_RESULTS_AGAIN,
  },
  { version: 29, name: "a group's key hash in 28 bits", sql: KEY_HASH_NARROWED },
];
