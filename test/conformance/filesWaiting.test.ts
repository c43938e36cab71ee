// MetricsReads.filesWaiting on each journal: the unfinished files that wait for their operator
// (held, scheduled for a time still ahead, paused), what /metrics counts as smsdrop_files_waiting.
import assert from 'node:assert/strict';
import { it } from 'node:test';
import { onEachJournal } from './journals.js';
import { seedFile } from './seed.js';

onEachJournal('MetricsReads.filesWaiting', ({ open }) => {
  it('counts held, scheduled and paused unfinished files, and no other', async () => {
    const j = await open();
    const now = '2026-12-06T08:00:00.000Z';
    const set = async (status: string, control: string | null, startAt: string | null) => {
      const { fileId } = await seedFile(j, status);
      await j.run(
        'UPDATE files SET control = ?, start_at = ? WHERE id = ?',
        control,
        startAt,
        fileId,
      );
    };
    assert.deepEqual(await j.handle.reads.filesWaiting(now), [], 'none in an empty journal');
    await set('sending', 'held', null);
    await set('intake', 'held', null);
    await set('sending', 'paused', null);
    await set('sending', null, '2026-12-06T09:00:00.000Z'); // its time ahead: scheduled
    await set('sending', null, '2026-12-06T07:00:00.000Z'); // its time come: it goes
    await set('sending', null, null); // it goes
    await set('sending', 'cancelled', null); // it ends, waits for nobody
    await set('done', 'paused', null); // over
    await set('refused', 'held', null); // over
    const counts = (await j.handle.reads.filesWaiting(now)).map((w) => [
      w.waiting,
      Number(w.files),
    ]);
    assert.deepEqual(counts, [
      ['held', 2],
      ['paused', 1],
      ['scheduled', 1],
    ]);
  });
});
