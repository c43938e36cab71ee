// The PostgreSQL journal's settings: SMSDROP_DATABASE_URL (postgres:// only, TLS chosen by
// smsdrop: verified, plain only to loopback; its password never shown), SMSDROP_LEASE,
// SMSDROP_NODE_ID, SMSDROP_DATABASE_CA. What the PostgreSQL journal makes of them (its node id, its
// TLS options) is test/pg/connectionSettings.test.ts.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ConfigError, validateConfig } from '../../src/config/index.js';
import { parseDatabaseUrl } from '../../src/config/settings/database.js';

const PASSWORD = 'pa55-W0rd-never-shown';

function refused(settings: Record<string, unknown>, code: string, also?: RegExp): string {
  let caught: unknown;
  try {
    validateConfig(settings);
  } catch (err) {
    caught = err;
  }
  assert.ok(caught instanceof ConfigError, `refused: ${JSON.stringify(settings)}`);
  assert.equal(caught.code, code);
  if (also) assert.match(caught.message, also);
  assert.ok(!caught.message.includes(PASSWORD), `no password in: ${caught.message}`);
  assert.ok(!caught.message.includes('\n'), 'one line');
  return caught.message;
}

describe('the PostgreSQL settings', () => {
  it('unset: the SQLite journal, a 30 s lease, the node id made at start', () => {
    const config = validateConfig({});
    assert.equal(config.databaseUrl, undefined);
    assert.deepEqual(config.lease, { ms: 30_000, text: '30s' });
    assert.equal(config.nodeId, undefined);
  });

  it('takes postgres:// and postgresql:// URLs, loopback ones plain', () => {
    for (const url of [
      `postgres://smsdrop:${PASSWORD}@127.0.0.1:5432/sms`,
      'postgresql://smsdrop@localhost/sms',
      'postgres:///sms?host=/var/run/postgresql',
      'postgres://[::1]/sms',
    ]) {
      const parsed = validateConfig({ databaseUrl: url }).databaseUrl!;
      assert.equal(parsed.url, url);
      assert.equal(parsed.local, true, url);
      assert.ok(!parsed.shown.includes(PASSWORD), parsed.shown);
    }
  });

  it('to any other host: the URL shown without its password', () => {
    const parsed = parseDatabaseUrl(`postgres://smsdrop:${PASSWORD}@db.example.com/sms`);
    assert.ok(typeof parsed !== 'string');
    assert.equal(parsed.local, false);
    assert.equal(parsed.shown, 'postgres://smsdrop:(hidden)@db.example.com/sms');
  });

  it('refuses plain or unverified TLS to another host, and TLS parameters in the URL', () => {
    const url = (query: string) => `postgres://smsdrop:${PASSWORD}@db.example.com/sms?${query}`;
    refused({ databaseUrl: url('sslmode=disable') }, 'E_CONFIG_DATABASE_URL', /loopback/);
    for (const query of ['sslmode=require', 'sslmode=prefer', 'sslmode=no-verify', 'ssl=true'])
      refused({ databaseUrl: url(query) }, 'E_CONFIG_DATABASE_URL', /SMSDROP_DATABASE_URL/);
    const message = refused(
      { databaseUrl: url('sslrootcert=/etc/ca.pem') },
      'E_CONFIG_DATABASE_URL',
      /SMSDROP_DATABASE_CA/,
    );
    assert.match(message, /smsdrop:\(hidden\)@db\.example\.com/);
    refused({ databaseUrl: 'mysql://db.example.com/sms' }, 'E_CONFIG_DATABASE_URL');
    refused(
      {
        databaseUrl: `postgres://u:${PASSWORD}@db.example.com/sms?password=${PASSWORD}&sslmode=allow`,
      },
      'E_CONFIG_DATABASE_URL',
    );
    // sslmode=disable to loopback is what the default does anyway.
    assert.equal(
      validateConfig({ databaseUrl: 'postgres://127.0.0.1/sms?sslmode=disable' }).databaseUrl
        ?.local,
      true,
    );
  });

  it('a lease from 2s to 1h; a node id without spaces', () => {
    assert.equal(validateConfig({ lease: '2m' }).lease.ms, 120_000);
    for (const lease of ['1s', '2h', 'off', 'soon']) refused({ lease }, 'E_CONFIG_LEASE');
    assert.equal(validateConfig({ nodeId: ' web-1:42 ' }).nodeId, 'web-1:42');
    refused({ nodeId: 'web 1' }, 'E_CONFIG_NODE_ID');
  });
});
