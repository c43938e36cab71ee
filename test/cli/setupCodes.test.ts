// Set-up mistakes that used to look like outages (issue 32, item 4), each through the real CLI
// against the real simulator: a wrong token, account or app, an untrusted certificate (stopped at
// the first request, never retried), an unreachable provider and a non-numeric template id end
// `send` with exit 2, one line `smsdrop: E_CODE: …` and `code` in --json; the daemon keeps its
// pause but its log line and `smsdrop status` carry the code.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import forge from 'node-forge';
import {
  contactsCsv,
  CREDENTIALS,
  type Simulator,
  startDaemon,
  startSimulatorProcess,
  tempDir,
} from '../daemon/helpers.js';
import { type Run, smsdrop } from './helpers.js';

/** Exit 2, one line `smsdrop: CODE: …` on stderr (no stack, never the token), code in --json. */
function assertCoded(run: Run, code: string, also?: RegExp): { status: string; requests: number } {
  assert.equal(run.status, 2, run.stdout + run.stderr);
  const lines = run.stderr.split('\n').filter((l) => l.startsWith('smsdrop: '));
  assert.equal(lines.length, 1, run.stderr);
  assert.match(lines[0]!, new RegExp(`^smsdrop: ${code}: `));
  if (also) assert.match(lines[0]!, also);
  assert.doesNotMatch(run.stderr, /\n\s+at |unexpected error/, 'no stack');
  const token = CREDENTIALS.SMSDROP_AUTH_TOKEN;
  assert.ok(!run.stderr.includes(token) && !run.stdout.includes(token), 'never the token');
  const summary = JSON.parse(run.stdout) as { code?: string; status: string; requests: number };
  assert.equal(summary.code, code, run.stdout);
  return summary;
}

const HOUR = 3_600_000;

interface Pems {
  cert: string;
  key: string;
}

/**
 * A certificate for 127.0.0.1, made with node-forge (behind selfsigned, which refuses to make an
 * expired one and signs a second one with SHA-1, which OpenSSL refuses): signed by `issuer`, or
 * by itself.
 */
function certificate(
  commonName: string,
  validity: { from: number; to: number },
  issuer?: { cert: forge.pki.Certificate; key: forge.pki.rsa.PrivateKey },
): { cert: forge.pki.Certificate; key: forge.pki.rsa.PrivateKey; pems: Pems } {
  const keys = forge.pki.rsa.generateKeyPair(2048);
  const cert = forge.pki.createCertificate();
  cert.publicKey = keys.publicKey;
  cert.serialNumber = '01';
  cert.validity.notBefore = new Date(validity.from);
  cert.validity.notAfter = new Date(validity.to);
  cert.setSubject([{ name: 'commonName', value: commonName }]);
  cert.setIssuer(issuer ? issuer.cert.subject.attributes : cert.subject.attributes);
  cert.setExtensions([
    { name: 'basicConstraints', cA: !issuer },
    { name: 'subjectAltName', altNames: [{ type: 7, ip: '127.0.0.1' }] },
  ]);
  cert.sign(issuer?.key ?? keys.privateKey, forge.md.sha256.create());
  const pems = {
    cert: forge.pki.certificateToPem(cert),
    key: forge.pki.privateKeyToPem(keys.privateKey),
  };
  return { cert, key: keys.privateKey, pems };
}

/**
 * PEM files in dir: an expired certificate for 127.0.0.1, and one signed by a CA nobody trusts
 * (and that CA's certificate, to trust it).
 */
function certificates(dir: string): { expired: Pems; signedByUnknownCa: Pems; unknownCa: string } {
  const write = (name: string, pems: Pems): Pems => {
    const file = (ext: string) => path.join(dir, `${name}.${ext}`);
    fs.writeFileSync(file('pem'), pems.cert);
    fs.writeFileSync(file('key'), pems.key);
    return { cert: file('pem'), key: file('key') };
  };
  const now = Date.now();
  const expired = certificate('expired', { from: now - 48 * HOUR, to: now - 24 * HOUR });
  const day = { from: now - HOUR, to: now + 24 * HOUR };
  const unknownCa = certificate('unknown CA', day);
  const leaf = certificate('127.0.0.1', day, unknownCa);
  return {
    expired: write('expired', expired.pems),
    signedByUnknownCa: write('leaf', leaf.pems),
    unknownCa: write('unknown-ca', unknownCa.pems).cert,
  };
}

/** A loopback port nothing listens on (it did a moment ago). */
async function closedPort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

describe('set-up mistakes at the start of a send: a code, exit 2', () => {
  let dir: string;
  let csv: string;
  const sims: Record<string, Simulator> = {};
  let ca: Record<string, string> = {};
  let runs = 0;
  const dataDir = () => path.join(dir, `data${++runs}`);

  before(async () => {
    dir = tempDir('setup-codes');
    csv = path.join(dir, 'list.csv');
    fs.writeFileSync(csv, contactsCsv(2));
    const certs = certificates(dir);
    const sub = (name: string) => {
      const d = path.join(dir, name);
      fs.mkdirSync(d);
      return d;
    };
    const https = (name: string, extra: string[] = []) => [
      '--https',
      '--ca-file',
      path.join(dir, `${name}-ca.pem`),
      ...extra,
    ];
    const start = async (name: string, flags: string[] = []) => {
      sims[name] = await startSimulatorProcess(sub(name), flags);
    };
    // One after the other: on a loaded machine five at once may not start within the helper's
    // time. Each that started is stopped after, whichever failed to.
    await start('plain');
    await start('selfSigned', https('selfSigned'));
    const served = (pems: { cert: string; key: string }) => [
      '--tls-cert',
      pems.cert,
      '--tls-key',
      pems.key,
    ];
    await start('expired', https('expired', served(certs.expired)));
    // Trusting the CA, its certificate names 127.0.0.1, not the address it is reached at.
    await start(
      'unknownCa',
      https('unknownCa', [...served(certs.signedByUnknownCa), '--host', '127.0.0.2']),
    );
    ca = { expired: certs.expired.cert, unknownCa: certs.unknownCa };
  });

  after(async () => {
    await Promise.all(Object.values(sims).map((s) => s.stop()));
    fs.rmSync(dir, { recursive: true, force: true });
  });

  const provider = (sim: Simulator, extra: Record<string, string> = {}) => ({
    ...CREDENTIALS,
    SMSDROP_BASE_URL: sim.url,
    SMSDROP_DATA_DIR: dataDir(),
    ...extra,
  });

  it('a wrong token, a wrong account, an unknown app: each its code', async () => {
    const [token, account, app] = await Promise.all([
      smsdrop(
        ['send', csv, '--json'],
        provider(sims.plain!, { SMSDROP_AUTH_TOKEN: 'wrongT0ken000000000000000000000042' }),
      ),
      smsdrop(
        ['send', csv, '--json'],
        provider(sims.plain!, { SMSDROP_ACCOUNT_SID: '8a216da8nosuch00000000000acc999' }),
      ),
      smsdrop(
        ['send', csv, '--json'],
        provider(sims.plain!, { SMSDROP_APP_ID: '8a216da8nosuch00000000000app999' }),
      ),
    ]);
    assert.equal(assertCoded(token, 'E_PROVIDER_AUTH', /111109/).status, 'paused');
    assertCoded(account, 'E_PROVIDER_ACCOUNT', /111141/);
    assertCoded(app, 'E_PROVIDER_APP', /111181/);
    assert.equal(sims.plain!.records().length, 0, 'nothing was sent');
  });

  it('an untrusted certificate stops at the first requests, never retried', async () => {
    const cases: Array<[string, Record<string, string>, RegExp]> = [
      ['self-signed', provider(sims.selfSigned!), /DEPTH_ZERO_SELF_SIGNED_CERT/],
      [
        'another host',
        provider(sims.unknownCa!, { SMSDROP_CA_FILE: ca.unknownCa! }),
        /ERR_TLS_CERT_ALTNAME_INVALID/,
      ],
      ['expired', provider(sims.expired!, { SMSDROP_CA_FILE: ca.expired! }), /CERT_HAS_EXPIRED/],
      ['unknown CA', provider(sims.unknownCa!), /UNABLE_TO_VERIFY_LEAF_SIGNATURE/],
    ];
    const results = await Promise.all(
      cases.map(([, env]) =>
        smsdrop(['send', csv, '--json'], { ...env, SMSDROP_RETRY_BASE_MS: '200' }),
      ),
    );
    results.forEach((run, i) => {
      const [what, , why] = cases[i]!;
      const summary = assertCoded(run, 'E_PROVIDER_TLS', why);
      // One request per message (2 here) at most, where each was tried 6 times before.
      assert.ok(summary.requests <= 2, `${what}: ${summary.requests} requests`);
      assert.match(run.stderr, /SMSDROP_CA_FILE/, `${what}: says what to do`);
    });
  });

  it('a provider nobody answers at: E_PROVIDER_UNREACHABLE', async () => {
    const run = await smsdrop(['send', csv, '--json'], {
      ...CREDENTIALS,
      SMSDROP_BASE_URL: `http://127.0.0.1:${await closedPort()}`,
      SMSDROP_DATA_DIR: dataDir(),
      SMSDROP_MAX_ATTEMPTS: '2',
      SMSDROP_RETRY_BASE_MS: '10',
    });
    assertCoded(run, 'E_PROVIDER_UNREACHABLE', /ECONNREFUSED/);
  });

  it('a non-numeric SMSDROP_TEMPLATE_ID is refused before anything is read or sent', async () => {
    const noTemplate = path.join(dir, 'no-template.csv');
    fs.writeFileSync(noTemplate, 'phone,data1,data2\n13800000001,a,b\n');
    const data = dataDir();
    const run = await smsdrop(
      ['send', noTemplate],
      provider(sims.plain!, { SMSDROP_TEMPLATE_ID: 'SMS_0001', SMSDROP_DATA_DIR: data }),
    );
    assert.equal(run.status, 2, run.stderr);
    assert.match(run.stderr, /^smsdrop: E_CONFIG_TEMPLATE_ID: .*"SMS_0001"/m);
    assert.ok(!fs.existsSync(path.join(data, 'smsdrop.sqlite')), 'nothing journalled');
  });

  it('the daemon keeps its pause, and its log line and status carry the code', async () => {
    const data = dataDir();
    const daemon = await startDaemon({
      dataDir: data,
      env: {
        ...CREDENTIALS,
        SMSDROP_BASE_URL: sims.plain!.url,
        SMSDROP_AUTH_TOKEN: 'wrongT0ken000000000000000000000042',
        SMSDROP_PAUSE_COOLDOWN_MS: '600000',
      },
    });
    try {
      fs.writeFileSync(path.join(data, 'inbox', 'list.csv'), contactsCsv(2));
      await daemon.waitFor(/sending paused for the account: E_PROVIDER_AUTH: 111109/, 60_000);
      const status = await smsdrop(['status', '--json'], { SMSDROP_DATA_DIR: data });
      assert.equal(status.status, 0, status.stderr);
      const paused = (JSON.parse(status.stdout) as { paused: { code: string } | null }).paused;
      assert.equal(paused?.code, 'E_PROVIDER_AUTH', status.stdout);
      const text = await smsdrop(['status'], { SMSDROP_DATA_DIR: data });
      assert.match(text.stdout, /PAUSED since .*: E_PROVIDER_AUTH: /);
      assert.equal(daemon.child.exitCode, null, 'the daemon still runs');
    } finally {
      daemon.kill('SIGKILL');
      await daemon.exited;
    }
  });
});

describe('CLI errors carry a code', () => {
  it('send of a directory, retry with neither --failed nor --unknown, an unknown option', async () => {
    const dir = tempDir('cli-codes');
    try {
      const env = { SMSDROP_DATA_DIR: path.join(dir, 'data') };
      const [directory, missing, retry, option] = await Promise.all([
        smsdrop(['send', dir], env),
        smsdrop(['send', path.join(dir, 'absent.csv')], env),
        smsdrop(['retry', '1'], env),
        smsdrop(['report', '--bogus'], env),
      ]);
      const codeLine = (r: Run) => r.stderr.split('\n').find((l) => l.startsWith('smsdrop: '));
      for (const r of [directory, missing, retry, option]) assert.equal(r.status, 2, r.stderr);
      assert.match(codeLine(directory)!, /^smsdrop: E_NOT_A_FILE: .*a directory, not a file$/);
      assert.match(codeLine(missing)!, /^smsdrop: E_NOT_A_FILE: .*absent\.csv: no such file$/);
      assert.match(codeLine(retry)!, /^smsdrop: E_USAGE: retry: say which rows to resend/);
      assert.match(codeLine(option)!, /^smsdrop: E_USAGE: unknown option '--bogus'/);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
