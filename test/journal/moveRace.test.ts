// Two writers on one journal file (two connections: two processes, or a process and a recovery)
// racing for the same move of the same batch: one makes it, the other is told E_BATCH_TRANSITION,
// never a silent "done" for a move it did not make.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { errorCode } from '../../src/errors.js';
import { getBatch } from '../../src/journal/batchNumbers.js';
import { moveBatch } from '../../src/journal/moves.js';
import { Journal } from '../../src/journal/connection.js';
import Database from '../../src/journal/sqlite.js';
import { journalWithOneGroup } from './fixture.js';
import { sqliteOf } from './sqliteOf.js';

const { db: first } = journalWithOneGroup('smsdrop-race-', {
  status: 'sending',
  createdAt: new Date().toISOString(),
});

/**
 * A second connection to the same file whose first read of a batch's state runs `between` right
 * after it: the other writer moves the batch between this writer's look and its write, the
 * interleaving two processes meet by chance.
 */
function secondWriter(between: () => void): Journal {
  const connection = new Database(first.name);
  connection.pragma('busy_timeout = 5000');
  let pending: (() => void) | undefined = between;
  const prepare = (text: string): Database.Statement => {
    const statement = connection.prepare(text);
    if (!/^SELECT state\b.* FROM batches WHERE id = \?/.test(text)) return statement;
    return new Proxy(statement, {
      get(target, key) {
        const value: unknown = Reflect.get(target, key, target);
        if (key !== 'get' || typeof value !== 'function') return value;
        return (...args: unknown[]) => {
          const row: unknown = (value as (...a: unknown[]) => unknown).apply(target, args);
          const run = pending;
          pending = undefined;
          run?.();
          return row;
        };
      },
    });
  };
  return new Journal(
    new Proxy(connection, {
      get: (target, key) =>
        key === 'prepare' ? prepare : (Reflect.get(target, key, target) as unknown),
    }),
  );
}

function batchIn(state: string, id: number): void {
  sqliteOf(first)
    .prepare(
      "INSERT INTO batches (id, file_id, group_id, req_id, numbers, state, created_at, updated_at) VALUES (?, 1, 1, ?, 1, ?, '', '')",
    )
    .run(id, `req${id}`, state);
}

type Outcome = boolean | string;

/**
 * The second writer moves the batch to `secondTo`; the first writer moves it to `firstTo` as soon
 * as the second has looked at the batch, or after the second is done if it never looks. Returns
 * each writer's outcome (true, or the code it threw) as { first, second }.
 */
function race(
  id: number,
  firstTo: 'accepted' | 'failed',
  secondTo: 'accepted' | 'failed',
): { first: Outcome; second: Outcome } {
  const attempt = (db: Journal, to: 'accepted' | 'failed'): Outcome => {
    try {
      return moveBatch(db, id, to, [['status_code = ?', to === 'accepted' ? '000000' : '160042']]);
    } catch (err) {
      return errorCode(err) ?? String(err);
    }
  };
  let firstOutcome: Outcome | undefined;
  const second = secondWriter(() => (firstOutcome = attempt(first, firstTo)));
  try {
    const secondOutcome = attempt(second, secondTo);
    return { first: firstOutcome ?? attempt(first, firstTo), second: secondOutcome };
  } finally {
    second.close();
  }
}

describe('two writers moving the same batch', () => {
  it('one makes the move, the other gets E_BATCH_TRANSITION', () => {
    batchIn('sending', 1);
    const { first: a, second: b } = race(1, 'accepted', 'accepted');
    assert.deepEqual([a, b].sort(), ['E_BATCH_TRANSITION', true].sort());
    assert.equal(getBatch(first, 1).state, 'accepted');
  });

  it('the loser of two different outcomes neither overwrites the winner nor claims it moved', () => {
    batchIn('sending', 2);
    const { first: a, second: b } = race(2, 'accepted', 'failed');
    assert.deepEqual([a, b].sort(), ['E_BATCH_TRANSITION', true].sort());
    const winner = a === true ? 'accepted' : 'failed';
    assert.equal(getBatch(first, 2).state, winner);
    assert.equal(getBatch(first, 2).status_code, winner === 'accepted' ? '000000' : '160042');
  });
});
