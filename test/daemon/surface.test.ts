// The operator surface by the conventions of the clients it meets, against a real daemon and
// simulator (child processes): a browser page on a DNS rebinding name is refused (Host header),
// downloads are never cached, /metrics is Prometheus text that `promtool check metrics` takes, with
// _total counters, process metrics and build info, /healthz can be opened without the token when
// the operator says so, and an outage tells of itself once, under a code, whatever its cooldowns.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { request } from 'node:http';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import {
  contactsCsv,
  httpUrlOf,
  type Proc,
  type Simulator,
  startDaemon,
  startSimulatorProcess,
  tempDir,
  waitUntil,
} from './helpers.js';
import { expositionProblems, promtoolProblems } from './promText.js';
import { type Receiver, startReceiver } from './webhookReceiver.js';

const SECRET = 'whsec-surface-test-0123456789';
const HTTP_TOKEN = 'http-token-surface-test-0123456789';

/** A GET naming `host` in its Host header (fetch cannot: the header is the URL's there). */
function getWithHost(url: string, route: string, host: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = request(`${url}${route}`, { headers: { host } }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode ?? 0));
    });
    req.on('error', reject);
    req.end();
  });
}

describe('smsdrop run: the operator surface by its conventions', () => {
  let dir: string;
  let sim: Simulator;
  const procs: Proc[] = [];
  let receiver: Receiver | undefined;

  before(async () => {
    dir = tempDir('daemon-surface');
    sim = await startSimulatorProcess(dir, ['--latency-ms', '1-3', '--faults', 'status=160032@/2']);
  });

  after(async () => {
    for (const p of procs) p.kill('SIGKILL');
    await Promise.all(procs.map((p) => p.exited));
    await sim?.stop();
    await receiver?.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('refuses a Host that is not loopback without a token; downloads are not cached; /metrics is clean', async () => {
    const data = path.join(dir, 'hosts');
    const d = await startDaemon({
      dataDir: data,
      simulator: sim,
      env: { SMSDROP_HTTP_HOSTS: 'smsdrop.internal', SMSDROP_CONCURRENCY: '1' },
    });
    procs.push(d);
    const url = httpUrlOf(d);
    const port = new URL(url).port;
    fs.writeFileSync(path.join(data, 'inbox', 'ops.csv'), contactsCsv(6));
    const result = path.join(data, 'done', 'ops.result.csv');
    await waitUntil(() => fs.existsSync(result), 30_000, 'done/ops.result.csv', d.output);

    for (const route of ['/', '/api/files', '/files/1/result.csv', '/metrics'])
      assert.equal(await getWithHost(url, route, `attacker.example:${port}`), 421, route);
    assert.equal(await getWithHost(url, '/api/files', 'attacker.example'), 421);
    for (const host of [`localhost:${port}`, `127.0.0.1:${port}`, `smsdrop.internal:${port}`])
      assert.equal(await getWithHost(url, '/api/files', host), 200, host);

    const download = await fetch(`${url}/files/1/result.csv`);
    assert.equal(download.status, 200);
    assert.equal(download.headers.get('cache-control'), 'no-store');
    assert.equal(download.headers.get('x-content-type-options'), 'nosniff');
    assert.equal((await download.text()).trim(), fs.readFileSync(result, 'utf8').trim());

    const metrics = await (await fetch(`${url}/metrics`)).text();
    assert.deepEqual(expositionProblems(metrics), []);
    const promtool = promtoolProblems(metrics);
    if (promtool !== undefined) assert.equal(promtool, '', 'promtool check metrics');
    assert.match(metrics, /^smsdrop_numbers_total\{outcome="accepted",code="000000"\} 3$/m);
    assert.match(metrics, /^smsdrop_numbers_total\{outcome="failed",code="160032"\} 3$/m);
    assert.match(metrics, /^smsdrop_requests_total\{outcome="accepted"\} 3$/m);
    assert.match(metrics, /^# TYPE smsdrop_requests_total counter$/m);
    assert.match(metrics, /^smsdrop_requests_in_flight 0$/m);
    assert.doesNotMatch(metrics, /^smsdrop_(numbers|requests)\{/m, 'no total as a gauge');
    assert.match(
      metrics,
      new RegExp(
        `^smsdrop_build_info\\{version="\\d+\\.\\d+\\.\\d+",node="${process.version}"\\} 1$`,
        'm',
      ),
    );
    assert.match(metrics, /^process_cpu_seconds_total \d/m);
    assert.match(metrics, /^process_resident_memory_bytes \d/m);
    assert.match(metrics, /^nodejs_eventloop_lag_seconds \d/m);
  });

  it('behind a token, /healthz says only ok or not without it when SMSDROP_HEALTHZ_OPEN is on', async () => {
    const d = await startDaemon({
      dataDir: path.join(dir, 'open-healthz'),
      env: { SMSDROP_HTTP_TOKEN: HTTP_TOKEN, SMSDROP_HEALTHZ_OPEN: 'on' },
    });
    procs.push(d);
    const url = httpUrlOf(d);
    const open = await fetch(`${url}/healthz`);
    assert.equal(open.status, 200);
    assert.deepEqual(await open.json(), { ok: true }, 'no figure, no reason');
    assert.equal(open.headers.get('cache-control'), 'no-store');
    assert.equal((await fetch(`${url}/api/status`)).status, 401, 'the rest still needs the token');
    assert.equal((await fetch(`${url}/metrics`)).status, 401);
    const full = await fetch(`${url}/healthz`, {
      headers: { Authorization: `Bearer ${HTTP_TOKEN}` },
    });
    const health = (await full.json()) as { ok: boolean; checks: Record<string, string> };
    assert.equal(health.ok, true);
    assert.match(health.checks.disk ?? '', /^writable: .* MB free$/);
    // With a token, the token decides, whatever the Host: as before.
    assert.equal(await getWithHost(url, '/api/status', 'attacker.example'), 401);
    d.kill('SIGTERM');
    assert.equal((await d.exited).code, 0);
  });

  it('an outage pauses once under a stable code: one sending.paused, one sending.resumed, however many cooldowns', async () => {
    receiver = await startReceiver(SECRET);
    const outageDir = path.join(dir, 'outage');
    fs.mkdirSync(outageDir);
    const first = await startSimulatorProcess(outageDir);
    const port = new URL(first.url).port;
    await first.stop(); // the provider is down from the start
    const data = path.join(dir, 'outage-data');
    const d = await startDaemon({
      dataDir: data,
      simulator: first,
      env: {
        SMSDROP_PAUSE_AFTER_FAILURES: '2',
        SMSDROP_PAUSE_COOLDOWN_MS: '1000',
        SMSDROP_RETRY_BASE_MS: '50',
        SMSDROP_WEBHOOK_URL: receiver.url,
        SMSDROP_WEBHOOK_SECRET: SECRET,
      },
    });
    procs.push(d);
    const url = httpUrlOf(d);
    fs.writeFileSync(path.join(data, 'inbox', 'outage.csv'), contactsCsv(3));
    const cooldowns = () => (d.output().match(/cooldown over/g) ?? []).length;
    await waitUntil(() => cooldowns() >= 3, 30_000, 'three cooldowns in the outage', d.output);
    const metrics = await (await fetch(`${url}/metrics`)).text();
    assert.match(metrics, /^smsdrop_paused\{reason="E_PROVIDER_UNREACHABLE"\} 1$/m);
    assert.deepEqual(expositionProblems(metrics), []);

    const back = await startSimulatorProcess(outageDir, ['--port', port]);
    try {
      const result = path.join(data, 'done', 'outage.result.csv');
      await waitUntil(() => fs.existsSync(result), 30_000, 'outage.csv sent once back', d.output);
      const sendingEvents = () =>
        receiver!.events.filter((e) => e.event.startsWith('sending.')).map((e) => e.event);
      await waitUntil(
        () => sendingEvents().includes('sending.resumed'),
        30_000,
        'sending.resumed at the receiver',
        d.output,
      );
      assert.deepEqual(sendingEvents(), ['sending.paused', 'sending.resumed']);
      assert.equal(receiver.badSignatures, 0);
      const after = await (await fetch(`${url}/metrics`)).text();
      assert.match(after, /^smsdrop_paused\{reason=""\} 0$/m);
    } finally {
      await back.stop();
    }
  });
});
