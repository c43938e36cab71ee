// The batch state machine: every change of state goes through moveBatch, which allows exactly the
// moves of BATCH_MOVES; an illegal one throws E_BATCH_TRANSITION and changes nothing. And the
// shape that keeps it so: no SQL outside src/journal (the simulator aside), no per-journal state
// in module globals.
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import { errorCode } from '../../src/errors.js';
import { applyTransition, startAttempt } from '../../src/journal/sendMoves.js';
import { getBatch } from '../../src/journal/batchNumbers.js';
import { moveBatch } from '../../src/journal/moves.js';
import {
  BATCH_MOVES,
  BATCH_STATE,
  type BatchState,
  OUTCOME_STATES,
  REPLACED_STATES,
  sqlList,
  UNSETTLED_STATES,
} from '../../src/ports/states.js';
import { journalWithOneGroup } from './fixture.js';
import { sqliteOf } from './sqliteOf.js';

const { db } = journalWithOneGroup('smsdrop-states-', {
  status: 'sending',
  createdAt: new Date().toISOString(),
});
let nextId = 1;
function batchIn(state: BatchState): number {
  const id = nextId++;
  sqliteOf(db)
    .prepare(
      "INSERT INTO batches (id, file_id, group_id, req_id, numbers, state, created_at, updated_at) VALUES (?, 1, 1, ?, 1, ?, '', '')",
    )
    .run(id, `req${id}`, state);
  return id;
}

describe('the batch state machine', () => {
  it('allows each move of the table and refuses every other with E_BATCH_TRANSITION, leaving the batch as it was', () => {
    const states = Object.values(BATCH_STATE);
    let refused = 0;
    for (const from of states) {
      for (const to of states) {
        const id = batchIn(from);
        if (BATCH_MOVES[from].includes(to)) {
          assert.equal(moveBatch(db, id, to), true, `${from} -> ${to}`);
          assert.equal(getBatch(db, id).state, to);
          continue;
        }
        assert.throws(
          () => moveBatch(db, id, to),
          (err) =>
            errorCode(err) === 'E_BATCH_TRANSITION' &&
            /cannot go from/.test((err as Error).message),
          `${from} -> ${to}`,
        );
        assert.equal(getBatch(db, id).state, from, 'unchanged');
        refused++;
      }
    }
    assert.ok(refused > 30, 'most pairs are refused');
  });

  it('an outcome for a batch already final is refused, not written over', () => {
    const id = batchIn('accepted');
    assert.throws(
      () => applyTransition(db, id, { to: 'failed', statusCode: '160042', statusMsg: 'late' }),
      (err) => errorCode(err) === 'E_BATCH_TRANSITION',
    );
    assert.equal(getBatch(db, id).state, 'accepted');
  });

  it('a claim the batch no longer answers to (moved by another run, or another req_id) is no move and no error', () => {
    const sending = batchIn('sending');
    assert.equal(startAttempt(db, { id: sending, req_id: `req${sending}` }, null), undefined);
    const planned = batchIn('planned');
    assert.equal(startAttempt(db, { id: planned, req_id: 'someone else' }, null), undefined);
    assert.equal(getBatch(db, planned).state, 'planned');
    assert.ok(startAttempt(db, { id: planned, req_id: `req${planned}` }, null) !== undefined);
    assert.deepEqual([getBatch(db, planned).state, getBatch(db, planned).attempts], ['sending', 1]);
  });

  it('the state sets cover every state once, and their SQL lists are built from them', () => {
    const all = [...UNSETTLED_STATES, ...OUTCOME_STATES, ...REPLACED_STATES].sort();
    assert.deepEqual(all, Object.values(BATCH_STATE).sort());
    assert.equal(sqlList(UNSETTLED_STATES), "('planned', 'sending')");
    for (const s of [...OUTCOME_STATES, ...REPLACED_STATES])
      if (!['failed', 'unknown', 'cancelled'].includes(s))
        assert.deepEqual(BATCH_MOVES[s], [], `${s} is final`);
  });
});

describe('where state and SQL live', () => {
  const files = (dir: string): string[] =>
    readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
      e.isDirectory()
        ? files(path.join(dir, e.name))
        : e.name.endsWith('.ts')
          ? [path.join(dir, e.name)]
          : [],
    );
  const source = files('src').map((file) => ({ file, text: readFileSync(file, 'utf8') }));

  it('no SQL outside the journals and their rules (the simulator aside)', () => {
    // SQL text, a pragma, or SQLite itself (a port's own `prepare` verb is no SQL).
    const sqlText =
      /\b(SELECT\s.+\sFROM|UPDATE\s+\w+\s+SET|INSERT\s+(OR\s+\w+\s+)?INTO|DELETE\s+FROM|CREATE\s+(TEMP\s+)?TABLE)\b|\.pragma\(|from '(better-sqlite3|[./]+journal\/sqlite\.js)'/;
    const outside = source.filter(
      ({ file, text }) =>
        !file.startsWith(path.join('src', 'journal', '')) &&
        !file.startsWith(path.join('src', 'journalRules', '')) &&
        !file.startsWith(path.join('src', 'pgjournal', '')) &&
        !file.startsWith(path.join('src', 'simulator')) &&
        sqlText.test(text),
    );
    assert.deepEqual(
      outside.map((f) => f.file),
      [],
    );
  });

  it('no module-level WeakMap keyed by a handle anywhere in src/', () => {
    assert.deepEqual(
      source.filter(({ text }) => /new WeakMap/.test(text)).map((f) => f.file),
      [],
    );
  });
});
