// The DaemonStateStore port on each journal: a pause and its end are one sending.paused /
// sending.resumed pair (a new reason while paused is the same pause: no event, its start kept),
// and what requests wait for is kept apart from the pause; status reads both back.
import assert from 'node:assert/strict';
import { it } from 'node:test';
import type { EventBody } from '../../src/ports/events.js';
import { onEachJournal, type Subject } from './journals.js';

/** The daemon's state as `smsdrop status` reads it: this process's record. */
const stateOf = async (j: Subject) => j.handle.reads.daemonState(process.pid);

async function events(j: Subject): Promise<Array<[string, string | undefined]>> {
  return (await j.handle.outbox.undelivered('r1', 100)).map((row) => {
    const body = JSON.parse(row.body) as EventBody;
    return [row.event, body.reason];
  });
}

onEachJournal('the DaemonStateStore', ({ open }) => {
  it('writes one sending.paused / sending.resumed pair per pause; a new reason while paused writes none', async () => {
    const j = await open();
    j.handle.outbox.setTargets(['r1']);
    await j.handle.daemon.setPause({ paused: null });
    assert.deepEqual(await events(j), [], 'not paused before: no change');
    await j.handle.daemon.setPause({ paused: '111142: balance', code: 'E_PROVIDER_BALANCE' });
    await j.handle.daemon.setPause({ paused: '111142: balance' });
    await j.handle.daemon.setPause({ paused: '160038: too many requests' });
    await j.handle.daemon.setPause({ paused: null });
    await j.handle.daemon.setPause({ paused: null });
    assert.deepEqual(await events(j), [
      ['sending.paused', '111142: balance'],
      ['sending.resumed', undefined],
    ]);
    await j.handle.daemon.setPause({ paused: 'again' });
    assert.deepEqual((await events(j)).at(-1), ['sending.paused', 'again'], 'a new pause');
  });

  it('keeps when the pause began while its reason changes, and clears it with the pause', async () => {
    const j = await open();
    await j.handle.daemon.setPause({ paused: '111142: balance', code: 'E_PROVIDER_BALANCE' });
    const first = await stateOf(j);
    assert.deepEqual(
      [first?.pid, first?.paused, first?.paused_code],
      [process.pid, '111142: balance', 'E_PROVIDER_BALANCE'],
    );
    assert.ok(first?.paused_since, 'the pause’s start is written');
    await j.handle.daemon.setPause({ paused: 'still no balance' });
    const second = await stateOf(j);
    assert.deepEqual(
      [second?.paused, second?.paused_code, second?.paused_since],
      ['still no balance', null, first.paused_since],
    );
    await j.handle.daemon.setPause({ paused: null, code: 'E_PROVIDER_BALANCE' });
    const resumed = await stateOf(j);
    assert.deepEqual(
      [resumed?.paused, resumed?.paused_code, resumed?.paused_since],
      [null, null, null],
    );
  });

  it('writes no event without a receiver, and the pause all the same', async () => {
    const j = await open();
    await j.handle.daemon.setPause({ paused: '111142: balance' });
    assert.equal((await stateOf(j))?.paused, '111142: balance');
    assert.deepEqual(await j.get('SELECT count(*) AS n FROM webhook_outbox'), { n: 0 });
  });

  it('keeps what requests wait for apart from the pause: each is set and cleared on its own', async () => {
    const j = await open();
    assert.equal(await stateOf(j), undefined, 'a daemon that never wrote has no record');
    await j.handle.daemon.setWaiting('the daily window is used up', process.pid);
    await j.handle.daemon.setPause({ paused: '111142: balance' });
    let state = await stateOf(j);
    assert.deepEqual(
      [state?.pid, state?.waiting, state?.paused],
      [process.pid, 'the daily window is used up', '111142: balance'],
    );
    await j.handle.daemon.setPause({ paused: null });
    assert.equal((await stateOf(j))?.waiting, 'the daily window is used up');
    await j.handle.daemon.setWaiting(null, process.pid);
    state = await stateOf(j);
    assert.deepEqual([state?.waiting, state?.paused], [null, null]);
    assert.ok(state?.updated_at, 'stamped');
  });

  // Without a pid: the record of the one daemon (SQLite), or this host's latest (PostgreSQL).
  it('without a pid, reads the record of what requests wait for', async () => {
    const j = await open();
    await j.handle.daemon.setWaiting('the daily window is used up', process.pid);
    const state = await j.handle.reads.daemonState();
    assert.deepEqual([state?.pid, state?.waiting], [process.pid, 'the daily window is used up']);
  });
});
