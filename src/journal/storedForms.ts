// The columns SQLite keeps in a form smaller than the text they were written as, in the table and
// in each index on them:
// - the times of attempts and batches, the two tables with a row per request: milliseconds since
//   1970 (INTEGER, 6 bytes) rather than ISO 8601 text (24 bytes);
// - an accepted batch's smsMessageSid (32 hex digits) as its 16 bytes, and its dateCreated (14
//   digits) as 7 bytes;
// - a group's app id and an attempt's process as references to apps and processes, each kept once;
// - a row's phone cell as '' where it is the number itself;
// - a batch of one number's number in its row only (SQLITE_DIALECT.batchPhones).
// Every read and write of them goes through the dialect (journalRules/rule.ts; SQLITE_DIALECT in
// rules.ts) or the readers below, so that what reports, the result files and `migrate --to` show
// is the text they were written as.
import { SENT_BY_A_FILE_READ_AGAIN, SENT_BY_ANOTHER_FILE } from '../ports/results.js';
import { SQLITE_DIALECT } from './rules.js';
import { batchCode } from '../journalRules/statusCodes.js';

const d = SQLITE_DIALECT;

/**
 * rows.phone_raw of a row whose cell was its number as it is (normalised, nothing to change):
 * '' rather than the number a second time. A cell that was empty has no number (phone is null).
 */
export const RAW_IS_PHONE = '';

/** SQL: the phone cell as the file had it, of the rows table's row `row` (an alias or its name). */
export function phoneRawOf(row: string): string {
  return `CASE WHEN ${row}.phone_raw = '${RAW_IS_PHONE}' AND ${row}.phone IS NOT NULL THEN ${row}.phone ELSE ${row}.phone_raw END`;
}

/** SQL: the process that made the attempt `attempt` (an alias or the table's name). */
export function nodeOf(attempt: string): string {
  return `coalesce((SELECT name FROM processes WHERE id = ${attempt}.node), ${attempt}.node)`;
}

/**
 * The columns kept in a smaller form, by table, each with the SQL that reads it back as the text
 * it was written as, given the table's name.
 */
const READERS: Readonly<Record<string, Readonly<Record<string, (table: string) => string>>>> = {
  attempts: {
    started_at: (t) => d.timeText(`${t}.started_at`),
    finished_at: (t) => d.timeText(`${t}.finished_at`),
    node: nodeOf,
  },
  batches: {
    created_at: (t) => d.timeText(`${t}.created_at`),
    updated_at: (t) => d.timeText(`${t}.updated_at`),
    sms_message_sid: (t) => d.sidText(`${t}.sms_message_sid`),
    date_created: (t) => d.stampText(`${t}.date_created`),
  },
  groups: { app_id: (t) => d.appOf(t) },
  rows: { phone_raw: phoneRawOf },
};

/** `column` of `table` as the SQL that reads it as the text it was written as. */
export function readableColumn(table: string, column: string): string {
  const reader = READERS[table]?.[column];
  return reader ? `${reader(table)} AS "${column}"` : `"${column}"`;
}

/** Columns the dump leaves out: read into another column (READERS). */
const READ_INTO: Readonly<Record<string, readonly string[]>> = { groups: ['app'] };

/** The columns of `table` as they are read (its own, without those read into another). */
export function readColumns(table: string, columns: readonly string[]): string[] {
  return columns.filter((c) => !READ_INTO[table]?.includes(c));
}

/**
 * What the dump reads as `table`, where its rows are not all in it: every batch's numbers, a
 * batch of one number's from its row (SQLITE_DIALECT.batchPhones).
 */
export function tableSource(table: string): string {
  if (table !== 'batch_numbers') return table;
  const phones = d.batchPhones('b');
  return `(SELECT b.id AS batch_id, ${phones} AS phones FROM batches b WHERE ${phones} IS NOT NULL)`;
}

/** A time written as text, as milliseconds; text that is not a time is kept as it is. */
const toMs = (column: string) => `coalesce(${SQLITE_DIALECT.storedTime(column)}, ${column})`;

/**
 * Each row with its outcome as the result files and reports give it: the batch's times, its
 * smsMessageSid and dateCreated read back as the text they were written as (SQLITE_DIALECT).
 */
const ROW_RESULTS = `
  SELECT r.id, r.file_id, r.line, ${phoneRawOf('r')} AS phone_raw, r.phone, r.group_id, r.batch_id, r.extras, r.intake,
    CASE r.intake
      WHEN 'valid' THEN CASE WHEN b.state IN ('accepted', 'failed', 'unknown', 'cancelled') THEN b.state ELSE 'pending' END
      ELSE r.intake
    END AS status,
    CASE WHEN r.intake = 'valid' THEN ${batchCode('b')} END AS status_code,
    CASE r.intake
      WHEN 'invalid' THEN r.error
      WHEN 'duplicate' THEN coalesce((
        SELECT CASE WHEN o.file_id = r.file_id THEN 'duplicate of line ' || o.line
          ELSE '${SENT_BY_ANOTHER_FILE}: line ' || o.line || ' of ' || f.name || ' (file ' || o.file_id || ')' END
        FROM rows o JOIN files f ON f.id = o.file_id WHERE o.id = r.duplicate_of), '${SENT_BY_A_FILE_READ_AGAIN}')
      ELSE b.status_msg
    END AS status_msg,
    ${SQLITE_DIALECT.sidText('b.sms_message_sid')} AS sms_message_sid,
    ${SQLITE_DIALECT.stampText('b.date_created')} AS date_created,
    ${SQLITE_DIALECT.timeText('b.updated_at')} AS updated_at
  FROM rows r LEFT JOIN batches b ON b.id = r.batch_id`;

/**
 * Rebuilds attempts and batches with INTEGER times (a column's type changes only so in SQLite),
 * their rows copied with the times converted, and their indexes made again; batches_by_req_id is
 * not: no statement looks a batch up by req_id alone (each claim names the batch's id too), and a
 * req_id is 16 random characters of 62. row_results reads updated_at as text again. The views
 * name the tables, which are renamed in place under legacy_alter_table, so the other views stay
 * as they are; open.ts runs migrations with foreign keys off, so dropping the old tables deletes
 * nothing that refers to them.
 */
export const TIMES_AS_MILLISECONDS = `
  PRAGMA legacy_alter_table = ON;
  CREATE TABLE attempts_ms (
    id            INTEGER PRIMARY KEY,
    batch_id      INTEGER NOT NULL REFERENCES batches(id),
    req_id        TEXT,
    started_at    INTEGER NOT NULL,
    finished_at   INTEGER,
    outcome       TEXT,
    status_code   TEXT,
    reason        TEXT
  );
  INSERT INTO attempts_ms (id, batch_id, req_id, started_at, finished_at, outcome, status_code, reason)
    SELECT id, batch_id, req_id, ${toMs('started_at')}, ${toMs('finished_at')}, outcome, status_code, reason
    FROM attempts ORDER BY id;
  DROP TABLE attempts;
  ALTER TABLE attempts_ms RENAME TO attempts;
  CREATE INDEX attempts_by_batch ON attempts (batch_id);
  CREATE INDEX attempts_by_finished ON attempts (finished_at);
  CREATE INDEX attempts_by_start ON attempts (started_at);

  CREATE TABLE batches_ms (
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
    created_at      INTEGER NOT NULL,
    updated_at      INTEGER NOT NULL
  );
  INSERT INTO batches_ms (id, file_id, group_id, parent_id, req_id, numbers, state, attempts,
      deferrals, maybe_sent, first_doubt_at, next_attempt_at, status_code, status_msg,
      sms_message_sid, date_created, created_at, updated_at)
    SELECT id, file_id, group_id, parent_id, req_id, numbers, state, attempts,
      deferrals, maybe_sent, first_doubt_at, next_attempt_at, status_code, status_msg,
      sms_message_sid, date_created, ${toMs('created_at')}, ${toMs('updated_at')}
    FROM batches ORDER BY id;
  DROP TABLE batches;
  ALTER TABLE batches_ms RENAME TO batches;
  CREATE INDEX batches_by_file ON batches (file_id, state);
  CREATE INDEX batches_by_group ON batches (group_id);
  PRAGMA legacy_alter_table = OFF;

  DROP VIEW row_results;
  CREATE VIEW row_results AS ${ROW_RESULTS};
`;

/**
 * Remakes row_results (ROW_RESULTS) over the batches' provider values kept as bytes (migration 22),
 * over a phone cell kept as '' where it is the number (migration 24), and over an accepted batch's
 * code not kept (migration 28).
 */
export const ROW_RESULTS_AGAIN = `
  DROP VIEW row_results;
  CREATE VIEW row_results AS ${ROW_RESULTS};
`;

/**
 * v_recipients, a row of a file with its message and outcome (docs/operations.md), with `app` the
 * SQL of its group's app id.
 */
export const recipientsView = (app: string) => `DROP VIEW v_recipients;
  CREATE VIEW v_recipients AS
  SELECT rr.id AS row_id, rr.file_id, f.name AS file_name, rr.line, rr.phone_raw, rr.phone,
    ${app} AS app_id, g.template_id, g.datas,
    CASE WHEN rr.extras LIKE '[%' THEN (
      SELECT json_group_object(n.value, coalesce(json_extract(rr.extras, '$[' || n.key || ']'), ''))
      FROM json_each(f.header, '$.extras') n) ELSE rr.extras END AS extras,
    rr.status, rr.status_code, rr.status_msg, rr.sms_message_sid, rr.date_created,
    (WITH RECURSIVE chain(id) AS (
       SELECT rr.batch_id
       UNION ALL
       SELECT b.parent_id FROM batches b JOIN chain c ON b.id = c.id WHERE b.parent_id IS NOT NULL
     ) SELECT count(*) FROM attempts a WHERE a.batch_id IN chain) AS attempts,
    rr.updated_at
  FROM row_results rr
  JOIN files f ON f.id = rr.file_id
  LEFT JOIN groups g ON g.id = rr.group_id;`;

/**
 * Each process that sent, once: an attempt keeps its process (host and pid) as a reference to
 * processes (attempts.node; SQLITE_DIALECT.storedNode, read by nodeOf), where one written before
 * keeps the text. The sender adds its process, if new, with each attempt (sendMoves.ts).
 */
export const PROCESSES_BY_REFERENCE = `
  CREATE TABLE processes (id INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE);
`;

/**
 * Each app id once, in apps: a group written from here keeps its app as a reference (app, a byte
 * or two) and '' in app_id, where one written before keeps the 32 characters. Read through
 * SQLITE_DIALECT.appOf. A personalised list writes a group a row: its app id as text would be a
 * third of the group's bytes. No foreign key: nothing deletes an app, and intake would pay a
 * look-up a group for the check.
 */
export const APPS_BY_REFERENCE = `
  CREATE TABLE apps (id INTEGER PRIMARY KEY, app_id TEXT NOT NULL UNIQUE);
  ALTER TABLE groups ADD COLUMN app INTEGER;
  ${recipientsView(SQLITE_DIALECT.appOf('g'))}
`;
