// `smsdrop status` says what is happening, not what happened, on each journal: a file a stopped
// `send` left is "stopped: no process is sending it" with what to run, without a rate or an ETA;
// once it is finished, status is idle, without a rate. And the file's time does not start again
// at each resume: `resume` gives its runs' time summed and the time since it was taken. The real
// CLI as child processes, the real simulator.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { after, it } from 'node:test';
import { smsdrop } from '../cli/helpers.js';
import { type Proc } from '../daemon/helpers.js';
import { onEachJournal } from './journals.js';
import { stopSendMidway } from './stoppedSend.js';

const ROWS = 120;

onEachJournal('status says what is happening now', ({ environment }) => {
  const running: Proc[] = [];
  const dirs: string[] = [];
  after(async () => {
    for (const p of running) p.kill('SIGKILL');
    await Promise.all(running.map((p) => p.exited));
    for (const d of dirs) fs.rmSync(d, { recursive: true, force: true });
  });

  it('a stopped file: stopped, what to run, no rate; resume sums its runs; then idle', async () => {
    const { env } = await stopSendMidway('status-truth', ROWS, await environment(), {
      running,
      dirs,
    });

    const stopped = await smsdrop(['status'], env);
    assert.equal(stopped.status, 0, stopped.stderr);
    assert.match(stopped.stdout, /contacts\.csv \(id 1\) .*stopped: no process is sending it/);
    assert.match(stopped.stdout, /run smsdrop resume contacts\.csv/);
    assert.match(stopped.stdout, /^sending +stopped: no process is sending/m);
    assert.match(stopped.stdout, /^rate +idle/m, 'no rate: nothing is being sent');
    const json = JSON.parse((await smsdrop(['status', '--json'], env)).stdout) as {
      sending: boolean;
      files: Array<{ being_sent: boolean; eta_seconds: number | null; sending_seconds: number }>;
    };
    assert.equal(json.sending, false);
    assert.deepEqual(
      json.files.map((f) => [f.being_sent, f.eta_seconds]),
      [[false, null]],
    );

    const resumed = await smsdrop(['resume', 'contacts.csv', '--json'], env);
    assert.equal(resumed.status, 0, resumed.stdout + resumed.stderr);
    const r = JSON.parse(resumed.stdout) as {
      elapsedMs: number;
      sendingMs: number;
      sinceTakenMs: number;
    };
    assert.ok(r.sendingMs > r.elapsedMs, `the send's run counts too: ${resumed.stdout}`);
    assert.ok(r.sinceTakenMs >= r.sendingMs, `since taken spans every run: ${resumed.stdout}`);
    const text = await smsdrop(['report', 'contacts.csv'], env);
    assert.equal(text.status, 0, text.stderr);

    const idle = await smsdrop(['status'], env);
    assert.match(idle.stdout, /^sending +idle$/m);
    assert.match(idle.stdout, /^rate +idle/m);
  });
});
