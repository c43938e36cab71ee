import assert from 'node:assert/strict';
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, it } from 'node:test';
import { ConfigError, loadConfig, SETTINGS, usesBuiltInSimulator } from '../../src/config/index.js';

function configDir(files: Record<string, unknown>): string {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'smsdrop-config-test-'));
  for (const [name, value] of Object.entries(files))
    writeFileSync(path.join(dir, name), JSON.stringify(value));
  return dir;
}

describe('configuration', () => {
  it('has the documented defaults with nothing configured', () => {
    const c = loadConfig({ configDir: configDir({}), env: {} });
    assert.deepEqual(
      [
        c.format,
        c.concurrency,
        c.maxPerRequest,
        c.reqId,
        c.dataDir,
        c.baseUrl,
        c.timezone,
        c.sendWindow,
        c.sendWindowZone,
      ],
      ['json', 8, 200, true, './data', undefined, undefined, undefined, 'Asia/Shanghai'],
    );
    assert.equal(usesBuiltInSimulator(c), true);
  });

  it('layers defaults < default.json < local.json < environment < flags', () => {
    const dir = configDir({
      'default.json': { concurrency: 2, format: 'xml', maxPerRequest: 50 },
      'local.json': { concurrency: 3, maxPerRequest: 60 },
    });
    const c = loadConfig({
      configDir: dir,
      env: { SMSDROP_CONCURRENCY: '4', SMSDROP_MAX_PER_REQUEST: '70' },
      flags: { maxPerRequest: '80' },
    });
    assert.deepEqual([c.format, c.concurrency, c.maxPerRequest], ['xml', 4, 80]);
  });

  it('SMSDROP_CONFIG names the file used instead of local.json', () => {
    const dir = configDir({ 'local.json': { concurrency: 3 }, 'other.json': { concurrency: 5 } });
    assert.equal(
      loadConfig({ configDir: dir, env: { SMSDROP_CONFIG: path.join(dir, 'other.json') } })
        .concurrency,
      5,
    );
  });

  it('reads every documented environment variable', () => {
    const env = {
      SMSDROP_BASE_URL: 'https://app.cloopen.com:8883',
      SMSDROP_ACCOUNT_SID: 'sid',
      SMSDROP_AUTH_TOKEN: 'token',
      SMSDROP_APP_ID: 'app',
      SMSDROP_TEMPLATE_ID: '7',
      SMSDROP_FORMAT: 'xml',
      SMSDROP_CONCURRENCY: '16',
      SMSDROP_MAX_PER_REQUEST: '100',
      SMSDROP_REQ_ID: 'off',
      SMSDROP_CA_FILE: '/etc/ca.pem',
      SMSDROP_DATA_DIR: '/srv/sms',
      SMSDROP_TIMEZONE: 'Asia/Shanghai',
    };
    const c = loadConfig({ configDir: configDir({}), env });
    assert.deepEqual(
      [
        c.baseUrl,
        c.accountSid,
        c.authToken,
        c.appId,
        c.templateId,
        c.format,
        c.concurrency,
        c.maxPerRequest,
        c.reqId,
        c.caFile,
        c.dataDir,
        c.timezone,
      ],
      [
        'https://app.cloopen.com:8883',
        'sid',
        'token',
        'app',
        '7',
        'xml',
        16,
        100,
        false,
        '/etc/ca.pem',
        '/srv/sms',
        'Asia/Shanghai',
      ],
    );
    assert.equal(usesBuiltInSimulator(c), false);
  });

  it('names the setting, the value and what is expected, and never shows the token', () => {
    const dir = configDir({});
    const attempt = (env: Record<string, string>) => {
      try {
        loadConfig({ configDir: dir, env });
        return '';
      } catch (err) {
        assert.ok(err instanceof ConfigError);
        return err.message;
      }
    };
    assert.match(
      attempt({ SMSDROP_MAX_PER_REQUEST: '201' }),
      /maxPerRequest \(SMSDROP_MAX_PER_REQUEST\) = "201": expected a whole number from 1 to 200/,
    );
    assert.match(attempt({ SMSDROP_FORMAT: 'yaml' }), /format \(SMSDROP_FORMAT\) = "yaml"/);
    assert.match(
      attempt({ SMSDROP_REQ_ID: 'maybe' }),
      /reqId \(SMSDROP_REQ_ID\) = "maybe": expected on or off/,
    );
    assert.match(attempt({ SMSDROP_TIMEZONE: 'Mars/Olympus' }), /timezone .*IANA/);
    assert.match(attempt({ SMSDROP_BASE_URL: 'ftp://x' }), /baseUrl .*http\(s\) URL/);
    assert.match(
      attempt({ SMSDROP_SEND_WINDOW: '8-22' }),
      /sendWindow \(SMSDROP_SEND_WINDOW\) = "8-22": expected HH:MM-HH:MM on a 24-hour clock/,
    );
    assert.match(
      attempt({ SMSDROP_SEND_WINDOW: '08:00-08:00' }),
      /sendWindow .*shorter than a day/,
    );
    assert.match(attempt({ SMSDROP_SEND_WINDOW_ZONE: 'Beijing' }), /sendWindowZone .*IANA/);
    assert.equal(
      attempt({ SMSDROP_SEND_WINDOW: '22:00-06:00', SMSDROP_SEND_WINDOW_ZONE: 'Europe/Paris' }),
      '',
    );
    assert.equal(attempt({ SMSDROP_AUTH_TOKEN: '' }), '');
    assert.match(
      attempt({ SMSDROP_MESSAGE_WINDOW: '10000 per hour' }),
      /messageWindow \(SMSDROP_MESSAGE_WINDOW\) = "10000 per hour": expected N\/DURATION/,
    );
    assert.match(
      attempt({ SMSDROP_MESSAGES_PER_SECOND: '-1' }),
      /messagesPerSecond .*expected 0 \(no limit\) or a positive number/,
    );
    assert.match(
      attempt({ SMSDROP_MESSAGE_WINDOW: '150/1m' }),
      /messageWindow \(SMSDROP_MESSAGE_WINDOW\) = "150\/1m": allows fewer numbers than one full request of maxPerRequest \(SMSDROP_MAX_PER_REQUEST\) = 200/,
    );
    assert.equal(attempt({ SMSDROP_MESSAGE_WINDOW: '150/1m', SMSDROP_MAX_PER_REQUEST: '100' }), '');
    // Intl takes CST for America/Chicago: a window of 08:00-22:00 "CST" would send through the
    // Chinese night.
    assert.match(
      attempt({ SMSDROP_SEND_WINDOW_ZONE: 'CST' }),
      /sendWindowZone \(SMSDROP_SEND_WINDOW_ZONE\) = "CST": expected an IANA time zone written Area\/City/,
    );
    assert.match(attempt({ SMSDROP_TIMEZONE: 'EST' }), /timezone .*Area\/City/);
    assert.equal(
      attempt({ SMSDROP_TIMEZONE: 'UTC', SMSDROP_SEND_WINDOW_ZONE: 'Asia/Shanghai' }),
      '',
    );
    // A base URL that could only fail later (plain http off loopback, credentials in it) exits
    // here, without the password.
    assert.match(
      attempt({ SMSDROP_BASE_URL: 'http://app.cloopen.com:8883' }),
      /baseUrl .*plain http is allowed only to a loopback host/,
    );
    const withPassword = attempt({ SMSDROP_BASE_URL: 'https://ops:hunter2@app.cloopen.com:8883' });
    assert.match(
      withPassword,
      /baseUrl \(SMSDROP_BASE_URL\) = "https:\/\/\(hidden\)@app\.cloopen\.com:8883": expected a URL without query, fragment or credentials/,
    );
    assert.doesNotMatch(withPassword, /hunter2/);
    // Passwords no URL parser splits off (a # or ? in them, backslashes): hidden all the same.
    for (const url of [
      'https://ops:hun#ter2@app.cloopen.com',
      'https://ops:hun?ter2@app.cloopen.com',
      'https:\\\\ops:hunter2@app.cloopen.com',
      'ops:hunter2@app.cloopen.com',
    ]) {
      const shown = attempt({ SMSDROP_BASE_URL: url });
      assert.match(shown, /baseUrl \(SMSDROP_BASE_URL\) = ".*\(hidden\)@app\.cloopen\.com"/, url);
      assert.doesNotMatch(shown, /hunter2|ter2/, url);
    }
    // Plain http names the host it refuses: never a host that was really a user name or a password.
    for (const url of [
      'http://s3cr3t?x@10.0.0.1:8883',
      'http://ops#hunter2@app.cloopen.com',
      'https://app.cloopen.com:8883/?sig=S3CR3T',
    ]) {
      const shown = attempt({ SMSDROP_BASE_URL: url });
      assert.match(shown, /expected a URL without query, fragment or credentials/, url);
      assert.doesNotMatch(shown, /s3cr3t|hunter2|S3CR3T|for ops/i, url);
    }
  });

  it('trims ids and the token (a CR pasted from a Windows file made every signature wrong)', () => {
    const env = {
      SMSDROP_BASE_URL: 'https://app.cloopen.com:8883',
      SMSDROP_ACCOUNT_SID: ' AC1\r\n',
      SMSDROP_AUTH_TOKEN: 'tok\r',
      SMSDROP_APP_ID: 'app1 ',
    };
    const c = loadConfig({ configDir: configDir({}), env });
    assert.deepEqual([c.accountSid, c.authToken, c.appId], ['AC1', 'tok', 'app1']);
  });

  it('reads the rate limits: numbers per second and a message window', () => {
    const c = loadConfig({
      configDir: configDir({ 'local.json': { messageWindow: '10000/1h' } }),
      env: { SMSDROP_MESSAGES_PER_SECOND: '50' },
    });
    assert.equal(c.messagesPerSecond, 50);
    assert.deepEqual(c.messageWindow, { messages: 10000, ms: 3_600_000, text: '10000/1h' });
    const none = loadConfig({ configDir: configDir({}), env: { SMSDROP_MESSAGE_WINDOW: '' } });
    assert.deepEqual([none.messagesPerSecond, none.messageWindow], [0, undefined]);
  });

  it('refuses an unknown setting in a file, and a file that is not JSON', () => {
    assert.throws(
      () => loadConfig({ configDir: configDir({ 'local.json': { concurency: 3 } }), env: {} }),
      /unknown setting\(s\) concurency/,
    );
    const dir = configDir({});
    writeFileSync(path.join(dir, 'local.json'), '{ not json');
    assert.throws(() => loadConfig({ configDir: dir, env: {} }), /local\.json is not valid/);
    // V8's message quotes the text around the mistake: here, the token.
    writeFileSync(
      path.join(dir, 'local.json'),
      '{\n  "authToken": S3CRETtoken0000000000000000000001\n}',
    );
    assert.throws(
      () => loadConfig({ configDir: dir, env: {} }),
      (err: Error) =>
        /local\.json is not valid JSON/.test(err.message) && !/S3CRET|token0000/.test(err.message),
    );
    writeFileSync(path.join(dir, 'local.json'), '{\n  "authToken": "x",\n}');
    assert.throws(
      () => loadConfig({ configDir: dir, env: {} }),
      /not valid JSON at line 3, column 1/,
    );
  });

  it('the README or a page of docs/ documents every setting and its environment variable', () => {
    const pages = [
      'README.md',
      ...readdirSync('docs')
        .filter((f) => f.endsWith('.md'))
        .map((f) => path.join('docs', f)),
    ];
    const docs = pages.map((page) => readFileSync(page, 'utf8')).join('\n');
    for (const [key, setting] of Object.entries(SETTINGS)) {
      assert.ok(
        docs.includes(`\`${setting.env}\``),
        `neither README nor docs/ name ${setting.env}`,
      );
      assert.ok(docs.includes(`\`${key}\``), `neither README nor docs/ name ${key}`);
    }
  });
});

describe('templates file', () => {
  const templates = { 'templates.json': { '1': '您的验证码是{1}' } };

  it('is config/templates.json when there is one and nothing names another', () => {
    const c = loadConfig({ configDir: configDir(templates), env: {} });
    assert.equal(c.templates?.byId.get('1')?.values, 1);
  });

  it('is none with SMSDROP_TEMPLATES_FILE=off, even where config/templates.json exists', () => {
    const env = { SMSDROP_TEMPLATES_FILE: 'off' };
    assert.equal(loadConfig({ configDir: configDir(templates), env }).templates, undefined);
  });
});

describe('provider credentials', () => {
  it('all three or none: a missing token is an error, not a quiet switch to the simulator', () => {
    const dir = configDir({});
    assert.throws(
      () =>
        loadConfig({
          configDir: dir,
          env: { SMSDROP_BASE_URL: 'https://app.cloopen.com:8883', SMSDROP_ACCOUNT_SID: 'sid' },
        }),
      /incomplete provider credentials: authToken \(SMSDROP_AUTH_TOKEN\) not set/,
    );
    assert.equal(usesBuiltInSimulator(loadConfig({ configDir: dir, env: {} })), true);
  });
});
