// The batch state machine, on each journal: every change of state goes through the one moveBatch
// rule, which allows exactly the moves of BATCH_MOVES; an illegal one throws E_BATCH_TRANSITION and
// changes nothing; a claim the batch no longer answers to is no move and no error.
import assert from 'node:assert/strict';
import { it } from 'node:test';
import { errorCode } from '../../src/errors.js';
import { moveBatch } from '../../src/journalRules/moves.js';
import { applyTransition } from '../../src/journalRules/outcomes.js';
import { BATCH_MOVES, BATCH_STATE, type BatchState } from '../../src/ports/states.js';
import { onEachJournal } from './journals.js';
import { batchOf, seedBatch, seedFile } from './seed.js';

const NOW = new Date().toISOString();

onEachJournal('the batch state machine', ({ open }) => {
  it('allows each move of the table and refuses every other with E_BATCH_TRANSITION, leaving the batch as it was', async () => {
    const j = await open();
    const at = await seedFile(j);
    const states = Object.values(BATCH_STATE);
    let refused = 0;
    for (const from of states)
      for (const to of states) {
        const id = await seedBatch(j, at, from, [`1380000${from.length}${to.length}`]);
        const move = () =>
          j.rule(
            moveBatch(id, to, [], { now: NOW, dialect: j.rules.dialect, guard: j.rules.guard }),
          );
        if (BATCH_MOVES[from].includes(to)) {
          assert.equal(await move(), true, `${from} -> ${to}`);
          assert.equal((await batchOf(j, id)).state, to);
          continue;
        }
        await assert.rejects(
          move,
          (err) =>
            errorCode(err) === 'E_BATCH_TRANSITION' &&
            /cannot go from/.test((err as Error).message),
          `${from} -> ${to}`,
        );
        assert.equal((await batchOf(j, id)).state, from, 'unchanged');
        refused++;
      }
    assert.ok(refused > 30, 'most pairs are refused');
  });

  it('refuses an outcome for a batch already final, rather than write over it', async () => {
    const j = await open();
    const id = await seedBatch(j, await seedFile(j), 'accepted', ['13800000001']);
    await assert.rejects(
      j.rule(
        applyTransition(
          j.rules,
          id,
          { to: 'failed', statusCode: '160042', statusMsg: 'late' },
          NOW,
        ),
      ),
      (err) => errorCode(err) === 'E_BATCH_TRANSITION',
    );
    assert.equal((await batchOf(j, id)).state, 'accepted');
  });

  it('a claim the batch no longer answers to (another state, another req_id) is no move and no error', async () => {
    const j = await open();
    const at = await seedFile(j);
    const claim = (id: number, reqId: string, onlyFrom: BatchState[] = ['planned']) =>
      j.rule(
        moveBatch(id, 'sending', [], {
          now: NOW,
          onlyFrom,
          reqId,
          dialect: j.rules.dialect,
          guard: j.rules.guard,
        }),
      );
    const sending = await seedBatch(j, at, 'sending', ['13800000002']);
    assert.equal(await claim(sending, (await batchOf(j, sending)).req_id), false);
    const planned = await seedBatch(j, at, 'planned', ['13800000003']);
    assert.equal(await claim(planned, 'someone else'), false);
    assert.equal(await claim(planned + 1000, 'nobody'), false, 'a batch not in the journal');
    assert.equal((await batchOf(j, planned)).state, 'planned');
    assert.equal(await claim(planned, (await batchOf(j, planned)).req_id), true);
    assert.equal((await batchOf(j, planned)).state, 'sending');
  });

  it('a move of a batch not in the journal is E_BATCH_MISSING', async () => {
    const j = await open();
    await assert.rejects(
      j.rule(
        moveBatch(999_999, 'accepted', [], {
          now: NOW,
          dialect: j.rules.dialect,
          guard: j.rules.guard,
        }),
      ),
      (err) => errorCode(err) === 'E_BATCH_MISSING',
    );
  });
});
