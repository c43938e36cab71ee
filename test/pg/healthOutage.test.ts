// A node's HTTP surface while its PostgreSQL journal does not answer: /healthz answers 503 naming
// E_DATABASE_UNREACHABLE (a load balancer takes the node out), the JSON API, the downloads and
// /metrics answer coded 503s, never the driver's own words; and /healthz is 200 again once the
// server is back.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { after, describe, test } from 'node:test';
import { httpUrlOf, startDaemon, tempDir, waitUntil } from '../daemon/helpers.js';
import { postgresMissing, usePostgres } from './cluster.js';

interface Answer {
  status: number;
  type: string;
  text: string;
}

async function get(url: string): Promise<Answer> {
  const res = await fetch(url);
  return {
    status: res.status,
    type: res.headers.get('content-type') ?? '',
    text: await res.text(),
  };
}

/** The routes that read the journal, each asked while it does not answer. */
const READING_ROUTES = [
  '/api/status',
  '/api/files',
  '/api/files/1',
  '/files/1/result.csv',
  '/metrics',
];

describe('the HTTP surface while PostgreSQL is down', { skip: postgresMissing() }, () => {
  const pg15 = usePostgres();
  const dir = tempDir('pg-health');
  after(() => fs.rmSync(dir, { recursive: true, force: true }));

  test('/healthz 503 E_DATABASE_UNREACHABLE, coded 503s elsewhere, 200 once back', async () => {
    const daemon = await startDaemon({
      dataDir: path.join(dir, 'node'),
      env: { SMSDROP_DATABASE_URL: await pg15.cluster.freshDatabase(), SMSDROP_LEASE: '3s' },
    });
    after(async () => {
      daemon.kill('SIGKILL');
      await daemon.exited;
    });
    const base = httpUrlOf(daemon);
    assert.equal((await get(`${base}/healthz`)).status, 200, daemon.output());

    process.kill(pg15.cluster.pid, 'SIGQUIT'); // pg_ctl stop -m immediate
    let health: Answer | undefined;
    await waitUntil(
      async () => (health = await get(`${base}/healthz`)).status === 503,
      30_000,
      '/healthz 503 while PostgreSQL is down',
      () => `${health?.text}\n${daemon.output()}`,
    );
    const body = JSON.parse(health!.text) as { ok: boolean; codes: string[]; reasons: string[] };
    assert.equal(body.ok, false);
    assert.ok(body.codes.includes('E_DATABASE_UNREACHABLE'), health!.text);
    assert.ok(
      body.reasons.some((r) => /E_DATABASE_UNREACHABLE/.test(r)),
      health!.text,
    );

    for (const route of READING_ROUTES) {
      const answer = await get(`${base}${route}`);
      assert.equal(answer.status, 503, `${route}: ${answer.text}`);
      assert.match(answer.type, /^application\/json/, route);
      const coded = JSON.parse(answer.text) as { code: string; error: string };
      assert.equal(coded.code, 'E_DATABASE_UNREACHABLE', `${route}: ${answer.text}`);
      assert.doesNotMatch(answer.text, /ECONNREFUSED|connect |127\.0\.0\.1:\d+/, route);
    }

    await pg15.cluster.restart();
    await waitUntil(
      async () => (health = await get(`${base}/healthz`)).status === 200,
      30_000,
      '/healthz 200 once PostgreSQL is back',
      () => `${health?.text}\n${daemon.output()}`,
    );
    assert.equal((await get(`${base}/api/status`)).status, 200);
    assert.equal((await get(`${base}/metrics`)).status, 200);
  });
});
