// What the operator surface keeps over pruning and restores: /metrics' _total counters never go
// down when a file is pruned (a pruned file's download answers 410 and its row links none), and
// webhook event ids never come back for another event after a backup is restored.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { after, describe, it } from 'node:test';
import {
  contactsCsv,
  daemonEnv,
  httpUrlOf,
  type Proc,
  type Simulator,
  startDaemon,
  startProcess,
  startSimulatorProcess,
  tempDir,
  waitUntil,
} from '../daemon/helpers.js';
import { expositionProblems } from '../daemon/promText.js';
import { type Receiver, startReceiver } from '../daemon/webhookReceiver.js';

const SECRET = 'whsec-retention-surface-0123456789';
const KEEP = { SMSDROP_KEEP: '2s', SMSDROP_REPEAT_WINDOW: 'off', SMSDROP_RESUME_WITHIN: 'off' };

const dirs: string[] = [];
const procs: Proc[] = [];
const sims: Simulator[] = [];
const receivers: Receiver[] = [];
after(async () => {
  for (const p of procs) p.kill('SIGKILL');
  await Promise.all(procs.map((p) => p.exited));
  for (const s of sims) await s.stop();
  for (const r of receivers) await r.close();
  for (const dir of dirs) fs.rmSync(dir, { recursive: true, force: true });
});

/** The counters' samples: series -> value, of the _total families of numbers and requests. */
function totals(metrics: string): Map<string, number> {
  const lines = metrics.split('\n').filter((l) => /^smsdrop_(numbers|requests)_total\{/.test(l));
  return new Map(lines.map((l) => [l.replace(/ \S+$/, ''), Number(l.replace(/^.* /, ''))]));
}

async function sentAndStopped(settings: Parameters<typeof startDaemon>[0], name: string) {
  const d = await startDaemon(settings);
  procs.push(d);
  fs.writeFileSync(path.join(settings.dataDir, 'inbox', name), contactsCsv(5));
  const result = path.join(settings.dataDir, 'done', name.replace(/\.csv$/, '.result.csv'));
  await waitUntil(() => fs.existsSync(result), 30_000, `${name} done`, d.output);
  const metrics = await (await fetch(`${httpUrlOf(d)}/metrics`)).text();
  d.kill('SIGTERM');
  assert.equal((await d.exited).code, 0, d.output());
  return metrics;
}

describe('the operator surface over pruning and restores', () => {
  it('counters never go down when a file is retried, then pruned; its download answers 410', async () => {
    const dir = tempDir('surface-prune');
    dirs.push(dir);
    const sim = await startSimulatorProcess(dir, ['--faults', 'status=160032@/2']);
    sims.push(sim);
    const settings = { dataDir: path.join(dir, 'data'), simulator: sim, env: KEEP };
    const sent = totals(await sentAndStopped(settings, 'list.csv'));
    const failed = 'smsdrop_numbers_total{outcome="failed",code="160032"}';
    const accepted = 'smsdrop_numbers_total{outcome="accepted",code="000000"}';
    assert.ok((sent.get(failed) ?? 0) > 0, [...sent.keys()].join('\n'));
    // `smsdrop retry` resends the failed numbers: they counted as failed, and still do.
    const retry = startProcess(['retry', '1', '--failed'], daemonEnv(settings));
    await retry.exited;
    const d1 = await startDaemon({ ...settings, env: { ...KEEP, SMSDROP_KEEP: 'off' } });
    procs.push(d1);
    const before = totals(await (await fetch(`${httpUrlOf(d1)}/metrics`)).text());
    d1.kill('SIGTERM');
    await d1.exited;
    for (const [series, value] of sent)
      assert.ok(
        (before.get(series) ?? 0) >= value,
        `${series} after the retry: ${before.get(series)}`,
      );
    assert.ok(
      (before.get(accepted) ?? 0) > (sent.get(accepted) ?? 0),
      'the retry got some accepted',
    );
    const ended = Date.now();
    await sleep(Math.max(0, ended + 2_500 - Date.now())); // past SMSDROP_KEEP

    const d = await startDaemon(settings); // prunes at its start
    procs.push(d);
    await d.waitFor(/pruned 1 file\(s\)/);
    const url = httpUrlOf(d);
    const metrics = await (await fetch(`${url}/metrics`)).text();
    assert.deepEqual(expositionProblems(metrics), []);
    assert.deepEqual(totals(metrics), before, 'the same totals after the prune');
    const files = (await (await fetch(`${url}/api/files`)).json()) as {
      files: Array<{ id: number; pruned: boolean; accepted: number }>;
    };
    assert.deepEqual(
      files.files.map((f) => [f.id, f.pruned]),
      [[1, true]],
    );
    const gone = await fetch(`${url}/files/1/result.csv`);
    assert.equal(gone.status, 410);
    assert.equal(gone.headers.get('cache-control'), 'no-store');
    assert.match(await gone.text(), /pruned on .*smsdrop report 1/);
    d.kill('SIGTERM');
    assert.equal((await d.exited).code, 0);
  });

  it('webhook ids never name two events, a backup restored into a new directory included', async () => {
    const dir = tempDir('surface-restore');
    dirs.push(dir);
    const sim = await startSimulatorProcess(dir);
    sims.push(sim);
    const receiver = await startReceiver(SECRET);
    receivers.push(receiver);
    const env = { SMSDROP_WEBHOOK_URL: receiver.url, SMSDROP_WEBHOOK_SECRET: SECRET };
    const first = { dataDir: path.join(dir, 'first'), simulator: sim, env };
    const d = await startDaemon(first);
    procs.push(d);
    const finished = (name: string) =>
      receiver.events.some((e) => e.event === 'file.finished' && e.file?.name === name);
    fs.writeFileSync(path.join(first.dataDir, 'inbox', 'one.csv'), contactsCsv(2));
    await waitUntil(() => finished('one.csv'), 30_000, 'one.csv finished', d.output);
    const copy = path.join(dir, 'copy');
    const backup = startProcess(['backup', copy], daemonEnv(first));
    assert.equal((await backup.exited).code, 0, backup.output());
    fs.writeFileSync(path.join(first.dataDir, 'inbox', 'two.csv'), contactsCsv(2, { from: 10 }));
    await waitUntil(() => finished('two.csv'), 30_000, 'two.csv finished', d.output);
    d.kill('SIGTERM');
    await d.exited;

    const restored = { dataDir: path.join(dir, 'restored'), simulator: sim, env };
    fs.mkdirSync(restored.dataDir);
    for (const name of fs.readdirSync(copy))
      fs.copyFileSync(path.join(copy, name), path.join(restored.dataDir, name));
    const r = await startDaemon(restored);
    procs.push(r);
    fs.writeFileSync(
      path.join(restored.dataDir, 'inbox', 'three.csv'),
      contactsCsv(2, { from: 20 }),
    );
    await waitUntil(() => finished('three.csv'), 30_000, 'three.csv finished', r.output);
    r.kill('SIGTERM');
    await r.exited;

    // A repeat (the same event posted again) may come; an id naming another event may not.
    const named = new Map<string, string>();
    for (const e of receiver.events) {
      const what = `${e.event} ${e.file?.name ?? ''}`;
      assert.equal(named.get(e.id) ?? what, what, `id ${e.id} names two events`);
      named.set(e.id, what);
    }
    assert.ok(named.size >= 6, [...named.values()].join('; '));
    assert.match(receiver.events[0]!.id, /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-/);
    assert.equal(new Set(receiver.deliveries).size, receiver.deliveries.length, 'delivery ids');
    assert.equal(receiver.badSignatures, 0);
  });
});
