// The client against tiny scripted node:http / node:https servers on 127.0.0.1:0: what is sent,
// and how every way an exchange can end maps to exactly one outcome.
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import https from 'node:https';
import { spawn } from 'node:child_process';
import net, { type AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { after, describe, it } from 'node:test';
import selfsigned from 'selfsigned';
import {
  ClientSetupError,
  createProviderClient,
  type ProviderClientOptions,
} from '../../src/provider/client.js';
import { classifyStatusCode as classOf } from '../../src/provider/codes.js';
import type { SendOutcome, TemplateSmsRequest } from '../../src/provider/types.js';

const SID = 'ACCOUNTSID00000000000000000000a1';
const TOKEN = 'SECRETTOKEN9f8e7d6c5b4a3f2e1d0c9b';
const MSG_SID = 'ff0123456789abcdef0123456789abcd';
const REQ: TemplateSmsRequest = {
  to: ['13800000001', '13800000002'],
  appId: 'app1',
  templateId: '1',
  datas: ['123456', '5'],
};
const OK_JSON = `{"statusCode":"000000","templateSMS":{"smsMessageSid":"${MSG_SID}","dateCreated":"20240102030405"}}`;

interface Captured {
  method: string;
  url: string;
  headers: http.IncomingHttpHeaders;
  body: string;
}
type Script = (req: http.IncomingMessage, res: http.ServerResponse, captured: Captured) => void;

interface TestServer {
  url: string;
  requests: Captured[];
  close: () => Promise<void>;
}

const cleanups: Array<() => void | Promise<void>> = [];
after(async () => {
  for (const c of cleanups.reverse()) await c();
});

async function listen(
  server: http.Server | https.Server,
  scheme: string,
  requests: Captured[],
): Promise<TestServer> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  const s: TestServer = {
    url: `${scheme}://127.0.0.1:${port}`,
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
  cleanups.push(s.close);
  return s;
}

function handlerFor(script: Script, requests: Captured[]): http.RequestListener {
  return (req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const captured = {
        method: req.method ?? '',
        url: req.url ?? '',
        headers: req.headers,
        body: Buffer.concat(chunks).toString('utf8'),
      };
      requests.push(captured);
      script(req, res, captured);
    });
  };
}

/**
 * A port on 127.0.0.1 where a TCP connect hangs: a listener (in python3: Node accepts every
 * connection itself) with an accept queue of one, which never accepts and holds one connection
 * already, so Linux drops the SYNs that follow, as a firewall or a dead route would.
 */
async function startFullListener(): Promise<number> {
  const listener = spawn('python3', ['-c', LISTEN_NEVER_ACCEPT], {
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  cleanups.push(() => {
    listener.kill();
  });
  const port = await new Promise<number>((resolve, reject) => {
    listener.once('error', reject);
    listener.stdout.once('data', (d: Buffer) => resolve(Number(String(d).trim())));
  });
  const filler = net.connect(port, '127.0.0.1');
  cleanups.push(() => {
    filler.destroy();
  });
  await new Promise<void>((resolve, reject) =>
    filler.once('connect', resolve).once('error', reject),
  );
  return port;
}
/** Whether a TCP connect to 127.0.0.1:port completes within ms. */
async function connects(port: number, ms: number): Promise<boolean> {
  const probe = net.connect(port, '127.0.0.1');
  try {
    return await new Promise<boolean>((resolve) => {
      probe.once('connect', () => resolve(true)).once('error', () => resolve(false));
      setTimeout(() => resolve(false), ms);
    });
  } finally {
    probe.destroy();
  }
}
const LISTEN_NEVER_ACCEPT = [
  'import socket, sys',
  's = socket.socket()',
  "s.bind(('127.0.0.1', 0))",
  's.listen(0)',
  'print(s.getsockname()[1], flush=True)',
  'sys.stdin.read()',
].join('\n');

function startServer(script: Script): Promise<TestServer> {
  const requests: Captured[] = [];
  return listen(http.createServer(handlerFor(script, requests)), 'http', requests);
}

const reply =
  (status: number, body: string, type = 'application/json'): Script =>
  (_req, res) => {
    res.writeHead(status, { 'content-type': type, 'content-length': Buffer.byteLength(body) });
    res.end(body);
  };

function options(
  baseUrl: string,
  extra: Partial<ProviderClientOptions> = {},
): ProviderClientOptions {
  return {
    baseUrl,
    accountSid: SID,
    authToken: TOKEN,
    format: 'json',
    maxPerRequest: 200,
    connectTimeoutMs: 2_000,
    responseTimeoutMs: 5_000,
    ...extra,
  };
}

function client(baseUrl: string, extra: Partial<ProviderClientOptions> = {}) {
  const c = createProviderClient(options(baseUrl, extra));
  cleanups.push(() => c.close());
  return c;
}

/** No secret, in any form, in the outcome. */
function assertNoSecrets(outcome: SendOutcome | string, captured?: Captured): void {
  const text = typeof outcome === 'string' ? outcome : JSON.stringify(outcome);
  assert.ok(!text.includes(TOKEN), `token leaked: ${text}`);
  if (captured) {
    const sig = new URL(captured.url, 'http://x').searchParams.get('sig') ?? '';
    assert.ok(!text.includes(sig), `sig leaked: ${text}`);
    assert.ok(
      !text.includes(String(captured.headers.authorization)),
      `authorization leaked: ${text}`,
    );
  }
}

describe('what the client sends', () => {
  it('POSTs a signed JSON request whose sig and Authorization share one fresh timestamp', async () => {
    const server = await startServer(reply(200, OK_JSON));
    const c = client(server.url, {
      timezone: 'UTC',
      now: () => new Date(Date.UTC(2024, 0, 2, 3, 4, 5)),
    });
    const outcome = await c.send({ ...REQ, reqId: 'batch-1' });
    assert.deepEqual(outcome, {
      kind: 'accepted',
      statusCode: '000000',
      smsMessageSid: MSG_SID,
      dateCreated: '20240102030405',
    });
    const [r] = server.requests;
    assert.ok(r);
    assert.equal(r.method, 'POST');
    const ts = '20240102030405';
    const sig = createHash('md5')
      .update(SID + TOKEN + ts)
      .digest('hex')
      .toUpperCase();
    assert.equal(r.url, `/2013-12-26/Accounts/${SID}/SMS/TemplateSMS?sig=${sig}`);
    assert.equal(r.headers.authorization, Buffer.from(`${SID}:${ts}`).toString('base64'));
    assert.equal(r.headers.accept, 'application/json');
    assert.equal(r.headers['content-type'], 'application/json;charset=utf-8');
    assert.equal(r.headers['content-length'], String(Buffer.byteLength(r.body)));
    assert.deepEqual(JSON.parse(r.body), {
      to: '13800000001,13800000002',
      appId: 'app1',
      templateId: '1',
      datas: ['123456', '5'],
      reqId: 'batch-1',
    });
  });

  it('sends XML with a byte Content-Length when asked, and reads the XML answer', async () => {
    const okXml = `<?xml version="1.0" encoding="UTF-8" standalone="yes"?><Response><statusCode>000000</statusCode><TemplateSMS><smsMessageSid>${MSG_SID}</smsMessageSid><dateCreated>20240102030405</dateCreated></TemplateSMS></Response>`;
    const server = await startServer(reply(200, okXml, 'application/xml'));
    const c = client(server.url, { format: 'xml' });
    const outcome = await c.send({ ...REQ, datas: ['中文', '😀'] });
    assert.equal(outcome.kind, 'accepted');
    const [r] = server.requests;
    assert.ok(r);
    assert.equal(r.headers.accept, 'application/xml');
    assert.equal(r.headers['content-type'], 'application/xml;charset=utf-8');
    assert.equal(r.headers['content-length'], String(Buffer.byteLength(r.body, 'utf8')));
    assert.ok(r.body.startsWith('<?xml version="1.0" encoding="UTF-8"?><TemplateSMS>'));
    assert.ok(r.body.includes('<data>中文</data><data>😀</data>'));
  });

  it('signs every request afresh from now()', async () => {
    const server = await startServer(reply(200, OK_JSON));
    let t = Date.UTC(2024, 0, 2, 3, 4, 5);
    const c = client(server.url, { timezone: 'UTC', now: () => new Date((t += 1000)) });
    await c.send(REQ);
    await c.send(REQ);
    const [a, b] = server.requests;
    assert.ok(a && b);
    assert.notEqual(a.headers.authorization, b.headers.authorization);
    assert.notEqual(a.url, b.url);
    assert.equal(
      Buffer.from(String(b.headers.authorization), 'base64').toString(),
      `${SID}:20240102030407`,
    );
  });

  it('keeps a base URL path prefix and ignores a trailing slash', async () => {
    const server = await startServer(reply(200, OK_JSON));
    const c = client(`${server.url}/gateway/`);
    assert.equal((await c.send(REQ)).kind, 'accepted');
    assert.match(server.requests[0]?.url ?? '', /^\/gateway\/2013-12-26\/Accounts\//);
  });
});

describe('answers', () => {
  it('a business error is rejected with its class and statusMsg', async () => {
    const server = await startServer(
      reply(200, '{"statusMsg":"【账号】余额不足","statusCode":"111142"}'),
    );
    const outcome = await client(server.url).send(REQ);
    assert.deepEqual(outcome, {
      kind: 'rejected',
      statusCode: '111142',
      codeClass: 'account-fatal',
      statusMsg: '【账号】余额不足',
    });
  });

  it('a code the tables do not explain: batch-rejected, and told once per code', async () => {
    const codes = ['199999', '199999', '188888', '199999', '160031'];
    let n = 0;
    const server = await startServer((req, res, captured) =>
      reply(200, JSON.stringify({ statusCode: codes[n++] }))(req, res, captured),
    );
    const told: string[] = [];
    const c = client(server.url, { onUnknownCode: (code) => told.push(code) });
    for (const code of codes) {
      const outcome = await c.send(REQ);
      assert.deepEqual(outcome, { kind: 'rejected', statusCode: code, codeClass: classOf(code) });
    }
    assert.deepEqual(told, ['199999', '188888']);
  });

  it('HTTP 500 is in doubt, with the status', async () => {
    const server = await startServer(reply(500, '{"statusCode":"000000"}'));
    const outcome = await client(server.url).send(REQ);
    assert.equal(outcome.kind, 'in-doubt');
    assert.equal(outcome.kind === 'in-doubt' && outcome.httpStatus, 500);
  });

  it('a garbage 200 body is in doubt', async () => {
    const server = await startServer(reply(200, '<html>proxy error</html'));
    assert.equal((await client(server.url).send(REQ)).kind, 'in-doubt');
  });

  it('000000 without smsMessageSid is in doubt, not accepted', async () => {
    const server = await startServer(reply(200, '{"statusCode":"000000","templateSMS":{}}'));
    assert.equal((await client(server.url).send(REQ)).kind, 'in-doubt');
  });
});

describe('transport failures', () => {
  it('a refused connection is not-sent', async () => {
    const server = await startServer(reply(200, OK_JSON));
    const url = server.url;
    await server.close();
    const outcome = await client(url).send(REQ);
    assert.equal(outcome.kind, 'not-sent');
    assert.match(outcome.kind === 'not-sent' ? outcome.reason : '', /ECONNREFUSED/);
  });

  it('a connect that times out is not-sent (nothing can have reached the provider), and names the timeout', async (t) => {
    const port = await startFullListener();
    if (await connects(port, 500))
      return t.skip(
        "this kernel completed a connect beyond the listener's accept queue: no hanging connect to test with",
      );
    const t0 = Date.now();
    const outcome = await client(`http://127.0.0.1:${port}`, { connectTimeoutMs: 300 }).send(REQ);
    assert.equal(outcome.kind, 'not-sent', JSON.stringify(outcome));
    assert.match(
      outcome.kind === 'not-sent' ? outcome.reason : '',
      /connect timeout|ConnectTimeout|UND_ERR_CONNECT_TIMEOUT/i,
    );
    assert.ok(
      Date.now() - t0 < 4_000,
      'it gave up at the connect timeout, not at the response timeout',
    );
    assertNoSecrets(outcome);
  });

  it('a server that destroys the socket after reading the body leaves the batch in doubt', async () => {
    const server = await startServer((req) => req.socket.destroy());
    const outcome = await client(server.url).send(REQ);
    assert.equal(outcome.kind, 'in-doubt');
    assert.equal(server.requests.length, 1);
    assertNoSecrets(outcome, server.requests[0]);
  });

  it('a server that never answers is in doubt after responseTimeoutMs', async () => {
    const server = await startServer(() => undefined);
    const outcome = await client(server.url, { responseTimeoutMs: 200 }).send(REQ);
    assert.equal(outcome.kind, 'in-doubt');
    assert.match(outcome.kind === 'in-doubt' ? outcome.reason : '', /UND_ERR_HEADERS_TIMEOUT/);
  });

  it('abort before sending is not-sent and nothing reaches the server', async () => {
    const server = await startServer(reply(200, OK_JSON));
    const outcome = await client(server.url).send(REQ, { signal: AbortSignal.abort() });
    assert.equal(outcome.kind, 'not-sent');
    assert.equal(server.requests.length, 0);
  });

  it('abort after the request was written is in doubt', async () => {
    const ac = new AbortController();
    const server = await startServer(() => ac.abort());
    const outcome = await client(server.url).send(REQ, { signal: ac.signal });
    assert.equal(outcome.kind, 'in-doubt');
  });

  it('a closed client answers not-sent without throwing', async () => {
    const server = await startServer(reply(200, OK_JSON));
    const c = client(server.url);
    await c.close();
    await c.close(); // twice is fine
    assert.equal((await c.send(REQ)).kind, 'not-sent');
    assert.equal(server.requests.length, 0);
  });
});

describe('local refusals (nothing is sent)', () => {
  // Each takes its code's own class, as the provider's answer with that code would.
  const cases: Array<[string, TemplateSmsRequest, string, string]> = [
    ['no numbers', { ...REQ, to: [] }, '112306', 'batch-rejected'],
    [
      'more numbers than maxPerRequest',
      { ...REQ, to: ['13800000001', '13800000002', '13800000003'] },
      '160048',
      'batch-rejected',
    ],
    [
      'duplicate numbers',
      { ...REQ, to: ['13800000001', '13800000001'] },
      '160045',
      'batch-rejected',
    ],
    [
      'a number with a comma',
      { ...REQ, to: ['13800000001,13800000002'] },
      '160042',
      'number-rejected',
    ],
    ['no appId', { ...REQ, appId: '' }, '111181', 'account-fatal'],
    ['no templateId', { ...REQ, templateId: '' }, '112307', 'batch-rejected'],
  ];
  for (const [name, req, code, codeClass] of cases) {
    it(`${name}: ${code}, ${codeClass}`, async () => {
      const server = await startServer(reply(200, OK_JSON));
      const outcome = await client(server.url, { maxPerRequest: 2 }).send(req);
      assert.equal(outcome.kind, 'rejected');
      assert.ok(outcome.kind === 'rejected');
      assert.equal(outcome.statusCode, code);
      assert.equal(outcome.codeClass, codeClass);
      assert.equal(outcome.local, true);
      assert.equal(server.requests.length, 0);
    });
  }

  it('a control character in an XML body: 160031', async () => {
    const server = await startServer(reply(200, OK_JSON));
    const outcome = await client(server.url, { format: 'xml' }).send({
      ...REQ,
      datas: ['a\u0001b'],
    });
    assert.equal(outcome.kind === 'rejected' && outcome.statusCode, '160031');
    assert.equal(server.requests.length, 0);
  });
});

describe('secrets', () => {
  it('an answer that echoes the token, sig and Authorization has them masked', async () => {
    const server = await startServer((req, res, captured) => {
      const body = JSON.stringify({
        statusCode: '111109',
        statusMsg: `sig ${req.url} token ${TOKEN} auth ${captured.headers.authorization}`,
      });
      reply(200, body)(req, res, captured);
    });
    const outcome = await client(server.url).send(REQ);
    assert.equal(outcome.kind, 'rejected');
    assert.ok(outcome.kind === 'rejected' && outcome.statusMsg?.includes('***'));
    assertNoSecrets(outcome, server.requests[0]);
  });

  it('setup errors never show the token', () => {
    for (const bad of [
      { baseUrl: 'http://example.com' },
      { maxPerRequest: 0 },
      { timezone: 'Mars/Base' },
    ]) {
      assert.throws(
        () => createProviderClient(options('https://127.0.0.1:1', bad)),
        (err: Error) => {
          assertNoSecrets(err.message);
          assertNoSecrets(String(err.stack));
          return err instanceof ClientSetupError;
        },
      );
    }
  });
});

describe('setup', () => {
  it('refuses plain http to a non-loopback host', () => {
    assert.throws(
      () => createProviderClient(options('http://app.cloopen.com:8883')),
      ClientSetupError,
    );
  });

  it('allows plain http to loopback hosts', () => {
    for (const url of [
      'http://127.0.0.1:1',
      'http://127.1.2.3:1',
      'http://[::1]:1',
      'http://localhost:1',
    ]) {
      const c = createProviderClient(options(url));
      void c.close();
    }
  });

  it('names an unreadable CA file', () => {
    const missing = path.join(os.tmpdir(), 'smsdrop-no-such-ca.pem');
    assert.throws(
      () => createProviderClient(options('https://127.0.0.1:1', { caFile: missing })),
      (err: Error) => {
        return err instanceof ClientSetupError && err.message.includes(missing);
      },
    );
  });

  it('refuses a CA file that holds no certificate', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'smsdrop-client-'));
    const file = path.join(dir, 'ca.pem');
    fs.writeFileSync(file, 'not a certificate');
    assert.throws(
      () => createProviderClient(options('https://127.0.0.1:1', { caFile: file })),
      ClientSetupError,
    );
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('refuses bad numbers with one message pattern', () => {
    assert.throws(
      () => createProviderClient(options('https://127.0.0.1:1', { responseTimeoutMs: -1 })),
      /Expected `responseTimeoutMs` to be a positive/,
    );
  });
});

describe('https', () => {
  const pems = selfsigned.generate([{ name: 'commonName', value: 'test' }], {
    keySize: 2048,
    days: 1,
    algorithm: 'sha256',
    notBeforeDate: new Date(Date.now() - 3_600_000),
    extensions: [
      { name: 'basicConstraints', cA: true },
      { name: 'subjectAltName', altNames: [{ type: 7, ip: '127.0.0.1' }] },
    ],
  });
  const startTls = () => {
    const requests: Captured[] = [];
    return listen(
      https.createServer(
        { key: pems.private, cert: pems.cert },
        handlerFor(reply(200, OK_JSON), requests),
      ),
      'https',
      requests,
    );
  };

  it('an untrusted certificate is not-sent, and nothing reaches the server', async () => {
    const server = await startTls();
    const outcome = await client(server.url).send(REQ);
    assert.equal(outcome.kind, 'not-sent');
    assert.equal(server.requests.length, 0);
  });

  it('trusts a CA given as PEM text or as a file, on top of the default roots', async () => {
    const server = await startTls();
    assert.equal((await client(server.url, { caPem: pems.cert }).send(REQ)).kind, 'accepted');
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'smsdrop-client-'));
    const file = path.join(dir, 'ca.pem');
    fs.writeFileSync(file, pems.cert);
    assert.equal((await client(server.url, { caFile: file }).send(REQ)).kind, 'accepted');
    fs.rmSync(dir, { recursive: true, force: true });
  });
});
