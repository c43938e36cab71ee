// The operator surface against a real daemon and simulator (child processes): /healthz, /metrics,
// /api/files and the downloads tell a dropped file's true figures (those of `smsdrop report
// --format json`); nothing can be changed through it; signed webhooks reach a receiver that was
// down for a while, each event once; and the set-up mistakes stop the daemon with exit 2.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
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
} from './helpers.js';
import { type Receiver, startReceiver } from './webhookReceiver.js';

const SECRET = 'whsec-operator-test-0123456789';
const HTTP_TOKEN = 'http-token-operator-test-0123456789';

async function runCli(args: string[], env: NodeJS.ProcessEnv): Promise<string> {
  const proc = startProcess(args, env);
  const { code } = await proc.exited;
  assert.equal(code, 0, proc.output());
  return proc.output();
}

describe('smsdrop run: dashboard, metrics, health check, webhooks', () => {
  let dir: string;
  let sim: Simulator;
  let receiver: Receiver;
  let daemon: Proc | undefined;

  before(async () => {
    dir = tempDir('daemon-operator');
    // Every 2nd request is refused with 160032 (a batch-rejected code): failures by code to show.
    sim = await startSimulatorProcess(dir, ['--latency-ms', '1-3', '--faults', 'status=160032@/2']);
    receiver = await startReceiver(SECRET, { down: true });
  });

  after(async () => {
    daemon?.kill('SIGKILL');
    await daemon?.exited;
    await sim?.stop();
    await receiver?.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('answers with the true figures of a dropped file, and posts each signed event once a receiver is back', async () => {
    const data = path.join(dir, 'data');
    const env = {
      SMSDROP_WEBHOOK_URL: receiver.url,
      SMSDROP_WEBHOOK_SECRET: SECRET,
      SMSDROP_CONCURRENCY: '1',
    };
    daemon = await startDaemon({ dataDir: data, simulator: sim, env });
    const d = daemon;
    const url = httpUrlOf(d);
    fs.writeFileSync(path.join(data, 'inbox', 'ops.csv'), contactsCsv(6, { bad: 1 }));
    await waitUntil(
      () => fs.existsSync(path.join(data, 'done', 'ops.result.csv')),
      30_000,
      'done/ops.result.csv',
      d.output,
    );

    const health = await fetch(`${url}/healthz`);
    assert.equal(health.status, 200, 'healthy');
    assert.equal(((await health.json()) as { ok: boolean }).ok, true);

    // The same figures as `smsdrop report --format json`.
    const cliEnv = daemonEnv({ dataDir: data, simulator: sim });
    const reported = JSON.parse(
      await runCli(['report', '1', '--format', 'json'], cliEnv),
    ) as Record<string, unknown>;
    const one = (await (await fetch(`${url}/api/files/1`)).json()) as Record<string, unknown>;
    for (const key of [
      'name',
      'status',
      'rows',
      'accepted',
      'failed',
      'unknown',
      'invalid',
      'duplicates',
      'pending',
      'failures',
    ])
      assert.deepEqual(one[key], reported[key], key);
    assert.deepEqual(
      [one.rows, one.accepted, one.failed, one.invalid, one.status],
      [7, 3, 3, 1, 'done'],
    );
    const failures = one.failures as Array<{
      status_code: string;
      count: number;
      what_to_do: string;
    }>;
    assert.equal(failures[0]?.status_code, '160032');
    assert.equal(failures[0]?.count, 3);
    assert.match(failures[0].what_to_do, /smsdrop/);
    const list = (await (await fetch(`${url}/api/files`)).json()) as {
      files: Array<Record<string, unknown>>;
    };
    assert.deepEqual(
      list.files.map((f) => [f.id, f.name, f.accepted, f.failed, f.invalid, f.progress]),
      [[1, 'ops.csv', 3, 3, 1, 1]],
    );
    assert.equal((await fetch(`${url}/api/files/99`)).status, 404);

    const metrics = await (await fetch(`${url}/metrics`)).text();
    assert.match(metrics, /^smsdrop_numbers_total\{outcome="accepted",code="000000"\} 3$/m);
    assert.match(metrics, /^smsdrop_numbers_total\{outcome="failed",code="160032"\} 3$/m);
    assert.match(metrics, /^smsdrop_rows\{status="invalid"\} 1$/m);
    assert.match(metrics, /^smsdrop_files\{status="done"\} 1$/m);
    assert.match(metrics, /^smsdrop_request_duration_seconds_count\{outcome="accepted"\} 3$/m);
    assert.match(metrics, /^smsdrop_paused\{reason=""\} 0$/m);
    assert.match(metrics, /^smsdrop_journal_bytes [1-9]\d*$/m);

    const result = await fetch(`${url}/files/1/result.csv`);
    assert.equal(result.status, 200);
    assert.equal(
      (await result.text()).trim(),
      fs.readFileSync(path.join(data, 'done', 'ops.result.csv'), 'utf8').trim(),
    );
    assert.match(await (await fetch(`${url}/files/1/rejected.csv`)).text(), /12-34x0/);
    assert.match(await (await fetch(`${url}/`)).text(), /<title>smsdrop<\/title>/);
    assert.equal(
      (await fetch(`${url}/assets/uPlot.min.js`)).status,
      200,
      'the chart library is served by the daemon',
    );
    assert.equal((await fetch(`${url}/api/files`, { method: 'POST' })).status, 405, 'read-only');

    // The receiver was down: the events wait in the journal. Back up, each arrives, once.
    await waitUntil(
      () => receiver.refused >= 2,
      30_000,
      'the daemon to try the receiver while it is down',
      d.output,
    );
    receiver.down = false;
    await waitUntil(
      () => receiver.events.some((e) => e.event === 'file.finished'),
      30_000,
      'file.finished at the receiver',
      d.output,
    );
    assert.equal(receiver.badSignatures, 0, 'every POST signed right');
    assert.deepEqual(
      receiver.events.map((e) => e.event),
      ['file.taken', 'file.finished'],
    );
    const finished = receiver.events[1]!;
    assert.equal(finished.file?.name, 'ops.csv');
    assert.equal(finished.file?.status, 'done');
    assert.deepEqual(
      [
        finished.file?.counts?.accepted,
        finished.file?.counts?.failed,
        finished.file?.counts?.invalid,
      ],
      [3, 3, 1],
    );
    d.kill('SIGTERM');
    assert.equal((await d.exited).code, 0);
    assert.doesNotMatch(d.output(), new RegExp(SECRET), 'the webhook secret is never printed');
    assert.equal(
      new Set(receiver.events.map((e) => e.id)).size,
      receiver.events.length,
      'no event twice',
    );
  });

  it('restarted, it posts nothing again', async () => {
    const data = path.join(dir, 'data');
    const before = receiver.events.length;
    daemon = await startDaemon({
      dataDir: data,
      simulator: sim,
      env: { SMSDROP_WEBHOOK_URL: receiver.url, SMSDROP_WEBHOOK_SECRET: SECRET },
    });
    fs.writeFileSync(path.join(data, 'inbox', 'second.csv'), contactsCsv(1, { from: 500 }));
    await waitUntil(
      () => receiver.events.filter((e) => e.event === 'file.finished').length === 2,
      30_000,
      'the second file.finished',
      daemon.output,
    );
    daemon.kill('SIGTERM');
    await daemon.exited;
    assert.deepEqual(
      receiver.events.slice(before).map((e) => [e.event, e.file?.name]),
      [
        ['file.taken', 'second.csv'],
        ['file.finished', 'second.csv'],
      ],
    );
  });

  it('with a token set, asks every request for it, and never prints it', async () => {
    const data = path.join(dir, 'token');
    const d = await startDaemon({
      dataDir: data,
      env: { SMSDROP_HTTP: '127.0.0.1:0', SMSDROP_HTTP_TOKEN: HTTP_TOKEN },
    });
    try {
      const url = httpUrlOf(d);
      assert.equal((await fetch(`${url}/api/files`)).status, 401);
      assert.equal(
        (await fetch(`${url}/healthz`, { headers: { Authorization: 'Bearer wrong' } })).status,
        401,
      );
      assert.equal(
        (await fetch(`${url}/api/files`, { headers: { Authorization: `Bearer ${HTTP_TOKEN}` } }))
          .status,
        200,
      );
    } finally {
      d.kill('SIGTERM');
      await d.exited;
    }
    assert.doesNotMatch(d.output(), new RegExp(HTTP_TOKEN));
  });

  it('refuses a public address without a token: exit 2, one line', async () => {
    const proc = startProcess(
      ['run'],
      daemonEnv({ dataDir: path.join(dir, 'public'), env: { SMSDROP_HTTP: '0.0.0.0:0' } }),
    );
    assert.equal((await proc.exited).code, 2);
    const lines = proc.output().trim().split('\n');
    assert.equal(lines.length, 1, proc.output());
    assert.match(
      lines[0]!,
      /SMSDROP_HTTP=0\.0\.0\.0:0 is not a loopback address: set SMSDROP_HTTP_TOKEN.*E_CONFIG_HTTP/,
    );
  });

  it('refuses an address in use: exit 2, one line', async () => {
    const busy = createServer();
    await new Promise<void>((resolve) => busy.listen(0, '127.0.0.1', resolve));
    const port = (busy.address() as AddressInfo).port;
    try {
      const proc = startProcess(
        ['run'],
        daemonEnv({ dataDir: path.join(dir, 'busy'), env: { SMSDROP_HTTP: `127.0.0.1:${port}` } }),
      );
      assert.equal((await proc.exited).code, 2);
      const lines = proc.output().trim().split('\n');
      assert.equal(lines.length, 1, proc.output());
      assert.match(lines[0]!, /is in use.*E_HTTP_ADDRESS_IN_USE/);
    } finally {
      busy.close();
    }
  });
});
