// What the PostgreSQL journal makes of its settings (src/pgjournal/index.ts): the node id (the
// setting, or host and pid made at start) and pg's TLS options (none to loopback unless the URL
// asks, the certificate verified otherwise, against the CA file when given). The settings
// themselves are checked by test/config/database.test.ts. No server is needed.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, it } from 'node:test';
import { type ConfigError, validateConfig } from '../../src/config/index.js';
import { parseDatabaseUrl } from '../../src/config/settings/database.js';
import { nodeIdOf, tlsOf } from '../../src/pgjournal/index.js';

const PASSWORD = 'pa55-W0rd-never-shown';

describe("the PostgreSQL journal's connection settings", () => {
  it('the node id: the setting, or host and pid when unset', () => {
    assert.equal(nodeIdOf(validateConfig({})), `${os.hostname()}:${process.pid}`);
    assert.equal(nodeIdOf({ nodeId: 'web-1' }), 'web-1');
  });

  it('plain to loopback', () => {
    for (const url of [
      `postgres://smsdrop:${PASSWORD}@127.0.0.1:5432/sms`,
      'postgresql://smsdrop@localhost/sms',
      'postgres:///sms?host=/var/run/postgresql',
      'postgres://[::1]/sms',
    ]) {
      const parsed = validateConfig({ databaseUrl: url }).databaseUrl!;
      assert.equal(tlsOf({ databaseUrl: parsed }), false, `${url}: plain to loopback`);
    }
  });

  it('to any other host: TLS with the certificate verified, against the CA file when given', () => {
    const parsed = parseDatabaseUrl(`postgres://smsdrop:${PASSWORD}@db.example.com/sms`);
    assert.ok(typeof parsed !== 'string');
    assert.deepEqual(tlsOf({ databaseUrl: parsed }), { rejectUnauthorized: true });
    const ca = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'pg-ca-')), 'ca.pem');
    fs.writeFileSync(ca, '-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n');
    assert.deepEqual(tlsOf({ databaseUrl: parsed, databaseCa: ca }), {
      rejectUnauthorized: true,
      ca: fs.readFileSync(ca, 'utf8'),
    });
    const local = parseDatabaseUrl('postgres://127.0.0.1/sms?sslmode=verify-full');
    assert.ok(typeof local !== 'string');
    assert.deepEqual(tlsOf({ databaseUrl: local }), { rejectUnauthorized: true }, 'asked for');
    assert.throws(
      () => tlsOf({ databaseUrl: parsed, databaseCa: `${ca}.missing` }),
      (err: ConfigError) => err.code === 'E_CONFIG_DATABASE_CA',
    );
  });
});
