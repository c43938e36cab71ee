// What an answered request costs the journal (src/journalRules/outcomes.ts, finishAttempt): an
// accepted batch read from the file is its move (whose UPDATE also says whether the batch has a
// parent) and its attempt's outcome, two statements; a PostgreSQL node pays a round trip for each.
// Only a batch planned again reads when its attempt started (its doubt counts from there). Run on
// a real SQLite journal, each statement the rule asks for noted on its way.
import assert from 'node:assert/strict';
import { it } from 'node:test';
import type { Journal } from '../../src/journal/connection.js';
import { SQLITE_RULES } from '../../src/journal/rules.js';
import { sql } from '../../src/journal/sql.js';
import { finishAttempt } from '../../src/journalRules/outcomes.js';
import { type Param, runNow } from '../../src/journalRules/rule.js';
import type { Transition } from '../../src/ports/records.js';
import { DOUBT } from '../../src/ports/states.js';
import { journalWithOneGroup } from './fixture.js';
import { sqliteOf } from './sqliteOf.js';

const { db } = journalWithOneGroup('smsdrop-outcome-statements-', {
  status: 'sending',
  createdAt: new Date().toISOString(),
});

let nextId = 1;
/** When every attempt here started. */
const STARTED_MS = Date.parse('2026-12-07T10:00:00.000Z');
/** A batch of one number being sent, and its attempt; their ids (the same). */
function sending(parentId: number | null = null): number {
  const id = nextId++;
  sqliteOf(db)
    .prepare(
      "INSERT INTO batches (id, file_id, group_id, parent_id, req_id, numbers, state, attempts, created_at, updated_at) VALUES (?, 1, 1, ?, ?, 1, 'sending', 1, 0, 0)",
    )
    .run(id, parentId, `req${id}`);
  sqliteOf(db)
    .prepare('INSERT INTO batch_numbers (batch_id, phones) VALUES (?, ?)')
    .run(id, `1380000${String(id).padStart(4, '0')}`);
  sqliteOf(db)
    .prepare('INSERT INTO attempts (id, batch_id, req_id, started_at) VALUES (?, ?, ?, ?)')
    .run(id, id, `req${id}`, STARTED_MS);
  return id;
}

/** finishAttempt on the journal; the first words of each statement it ran. */
function finish(journal: Journal, id: number, transition: Transition): string[] {
  const seen: string[] = [];
  const note = (text: string) => seen.push(text.trim().split(/\s+/).slice(0, 2).join(' '));
  const bound = (params: Param[]) => params as (string | number | null)[];
  const result = { outcome: transition.to, statusCode: '000000', reason: null };
  const rule = finishAttempt(
    SQLITE_RULES,
    { id, result },
    id,
    transition,
    new Date().toISOString(),
  );
  runNow(rule, {
    run: (text, params) => (note(text), sql(journal, text).run(...bound(params)).changes),
    all: (text, params) => (note(text), sql(journal, text).all(...bound(params))),
    get: (text, params) => (note(text), sql(journal, text).get(...bound(params))),
    durable: () => undefined,
  });
  return seen;
}

const ACCEPTED: Transition = {
  to: 'accepted',
  statusCode: '000000',
  smsMessageSid: 'sid',
  dateCreated: '20261207000000',
};

it('an accepted batch read from the file: its move and its attempt, nothing read', () => {
  const id = sending();
  assert.deepEqual(finish(db, id, ACCEPTED), ['UPDATE batches', 'UPDATE attempts']);
  const row = sqliteOf(db).prepare('SELECT state FROM batches WHERE id = ?').get(id);
  assert.deepEqual(row, { state: 'accepted' });
});

it('an accepted batch made from another also asks whether any number is suppressed', () => {
  const parent = sending();
  const id = sending(parent);
  assert.deepEqual(finish(db, id, ACCEPTED), ['UPDATE batches', 'SELECT 1', 'UPDATE attempts']);
});

it('a batch planned again reads when its attempt started: its doubt counts from there', () => {
  const id = sending();
  const seen = finish(db, id, {
    to: 'planned',
    nextAttemptAt: Date.now() + 1000,
    doubt: DOUBT.all,
    statusCode: null,
    statusMsg: 'no answer',
  });
  assert.match(seen[0]!, /^SELECT strftime/);
  const row = sqliteOf(db)
    .prepare('SELECT state, first_doubt_at FROM batches WHERE id = ?')
    .get(id);
  assert.deepEqual(row, { state: 'planned', first_doubt_at: '2026-12-07T10:00:00.000Z' });
});
