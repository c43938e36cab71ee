// Versioned schema of the journal. Each migration runs once, in order, in its own transaction;
// schema_migrations records which ones ran. Never edit a migration that has shipped: add one.
//
// Tables
//   files     one per (content, generation): identity is the SHA-256 of the bytes. `generation`
//             goes up only with `send --resend`, so a re-dropped file is recognised, never resent.
//   groups    rows sharing (app, template, values) within a file: one template message.
//   rows      one per data row of the CSV, with its final status (see ROW_STATUS in states.ts).
//   batches   one request's worth of numbers (<= maxPerRequest distinct numbers of one group),
//             written with its numbers before its first request (see BATCH_STATE in states.ts).
//   attempts  every request made for a batch: written before the request, completed after it.
export const MIGRATIONS: ReadonlyArray<{ version: number; name: string; sql: string }> = [
  {
    version: 1,
    name: 'files, groups, rows, batches, attempts',
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
        status          TEXT    NOT NULL,
        error           TEXT,
        duplicate_of    INTEGER,
        extras          TEXT,
        batch_id        INTEGER,
        status_code     TEXT,
        status_msg      TEXT,
        sms_message_sid TEXT,
        date_created    TEXT,
        updated_at      TEXT
      );
      CREATE INDEX rows_by_file ON rows (file_id, status, group_id);
      CREATE INDEX rows_by_batch ON rows (batch_id);
      -- The same number twice in one group is sent once: only one non-duplicate row may exist.
      CREATE UNIQUE INDEX rows_one_per_number ON rows (group_id, phone) WHERE status <> 'duplicate' AND status <> 'invalid';

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
      CREATE UNIQUE INDEX batches_by_req_id ON batches (req_id);

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
    `,
  },
];
