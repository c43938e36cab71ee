// HTTPS: a certificate made at start, trusted through caPem / caFile, with verification left on.
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { X509Certificate } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { Agent } from 'undici';
import type { RunningSimulator } from '../../src/simulator/index.js';
import { call, start } from './helpers.js';

describe('simulator over HTTPS', () => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'smsdrop-sim-tls-'));
  const caFile = path.join(dir, 'ca.pem');
  let sim: RunningSimulator;
  before(async () => {
    sim = await start({ https: true, caFile });
  });
  after(async () => {
    await sim.close();
    rmSync(dir, { recursive: true, force: true });
  });

  test('serves https on 127.0.0.1 and writes the certificate it exposes', () => {
    assert.match(sim.url, /^https:\/\/127\.0\.0\.1:\d+$/);
    assert.equal(sim.caFile, caFile);
    assert.equal(readFileSync(caFile, 'utf8'), sim.caPem);
    const cert = new X509Certificate(sim.caPem!);
    assert.match(cert.subjectAltName ?? '', /DNS:localhost/);
    assert.match(cert.subjectAltName ?? '', /IP Address:127\.0\.0\.1/);
    assert.ok(cert.checkIP('127.0.0.1'));
  });

  test('a client trusting the CA file gets answers, in both formats', async () => {
    const trusting = new Agent({ connect: { ca: readFileSync(caFile, 'utf8') } });
    try {
      assert.equal((await call(sim, { dispatcher: trusting })).code, '000000');
      assert.equal(
        (await call(sim, { format: 'xml', dispatcher: trusting, payload: { to: '13800000002' } }))
          .code,
        '000000',
      );
    } finally {
      await trusting.close();
    }
  });

  test('a client that does not trust it is refused at the handshake, and nothing is recorded', async () => {
    const before = sim.records.length;
    const plain = new Agent();
    try {
      await assert.rejects(call(sim, { dispatcher: plain }), (err: Error & { code?: string }) =>
        /SELF_SIGNED|CERT/.test(String(err.code)),
      );
      assert.equal(sim.records.length, before);
    } finally {
      await plain.close();
    }
  });
});
