// The contract between the Template SMS client (src/provider) and the simulator (src/simulator):
// the real client against the real simulator over loopback HTTP and HTTPS, in JSON and XML. If
// both sides pass this suite, the pipeline can be tested against the simulator with confidence.
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import {
  createProviderClient,
  type ProviderClient,
  type ProviderClientOptions,
} from '../../src/provider/client.js';
import { formatTimestamp } from '../../src/provider/sign.js';
import type { BodyFormat, SendOutcome, TemplateSmsRequest } from '../../src/provider/types.js';
import {
  startSimulator,
  type FaultRule,
  type RunningSimulator,
  type SimulatorOptions,
} from '../../src/simulator/index.js';

const SID = '8a216da8contract00000000000acc01';
const TOKEN = 'c0ntract5ecret7oken0000000000042';
const APP = '8a216da8contract00000000000app01';
const ZONE = 'Asia/Shanghai';
const NOW = new Date(Date.UTC(2024, 4, 6, 2, 3, 4)); // 10:03:04 in Shanghai
const clock = () => new Date(NOW);
const BLOCKED = '13900000009';
const TEMPLATES = { '1': 2, '2': 0, '3': 1 };

// ---------------------------------------------------------------------------------------------
// Everything the client says, and everything printed, is checked for secrets at the end.

const outcomes: SendOutcome[] = [];
const printed: string[] = [];
const secretsSeen = new Set<string>([TOKEN]);
const consoleMethods = ['log', 'info', 'warn', 'error', 'debug'] as const;
// eslint-disable-next-line @typescript-eslint/unbound-method -- kept only to be put back on console
const originalConsole = consoleMethods.map((m) => console[m]);
for (const m of consoleMethods)
  console[m] = (...args: unknown[]) => void printed.push(args.map(String).join(' '));
const onWarning = (w: Error) => printed.push(`${w.name}: ${w.message}`);
process.on('warning', onWarning);

const cleanups: Array<() => Promise<void>> = [];
after(async () => {
  for (const c of cleanups.reverse()) await c().catch(() => undefined);
  consoleMethods.forEach((m, i) => (console[m] = originalConsole[i] as (typeof console)[typeof m]));
  process.off('warning', onWarning);
});

let serial = 0;
const nextReqId = (tag: string) => `${tag}-${process.pid}-${++serial}`;
const req = (extra: Partial<TemplateSmsRequest> = {}): TemplateSmsRequest => ({
  to: ['13800000001', '13800000002'],
  appId: APP,
  templateId: '1',
  datas: ['123456', '5'],
  ...extra,
});

async function simulator(extra: Partial<SimulatorOptions> = {}): Promise<RunningSimulator> {
  const sim = await startSimulator({
    accountSid: SID,
    authToken: TOKEN,
    appIds: [APP],
    templates: TEMPLATES,
    blocked: [BLOCKED],
    now: clock,
    timezone: ZONE,
    ...extra,
  });
  cleanups.push(() => sim.close());
  return sim;
}

function client(
  sim: RunningSimulator,
  format: BodyFormat,
  extra: Partial<ProviderClientOptions> = {},
): ProviderClient {
  const c = createProviderClient({
    baseUrl: sim.url,
    accountSid: SID,
    authToken: TOKEN,
    format,
    maxPerRequest: 200,
    connectTimeoutMs: 2_000,
    responseTimeoutMs: 5_000,
    timezone: ZONE,
    now: clock,
    ...(sim.caPem ? { caPem: sim.caPem } : {}),
    ...extra,
  });
  cleanups.push(() => c.close());
  return c;
}

async function send(c: ProviderClient, r: TemplateSmsRequest): Promise<SendOutcome> {
  const outcome = await c.send(r);
  outcomes.push(outcome);
  return outcome;
}

function assertRejected(outcome: SendOutcome, statusCode: string, codeClass: string): void {
  assert.equal(outcome.kind, 'rejected', JSON.stringify(outcome));
  assert.ok(outcome.kind === 'rejected');
  assert.equal(outcome.statusCode, statusCode, JSON.stringify(outcome));
  assert.equal(outcome.codeClass, codeClass);
  assert.equal(outcome.local, undefined, 'the server answered, not the client');
}

// ---------------------------------------------------------------------------------------------
// Every check, in every scheme and format.

for (const scheme of ['http', 'https'] as const) {
  for (const format of ['json', 'xml'] as const) {
    describe(`${scheme} ${format}`, () => {
      let sim: RunningSimulator;
      let c: ProviderClient;
      before(async () => {
        sim = await simulator({ https: scheme === 'https' });
        c = client(sim, format);
      });

      /** Sends, and checks that a refused request left no record. */
      async function refused(r: TemplateSmsRequest, via = c): Promise<SendOutcome> {
        const before = sim.records.length;
        const outcome = await send(via, r);
        assert.equal(sim.records.length, before, 'a refused request must not be recorded');
        return outcome;
      }

      it('success: accepted, and the record matches the request exactly', async () => {
        const reqId = nextReqId('ok');
        const outcome = await send(c, req({ reqId }));
        assert.equal(outcome.kind, 'accepted', JSON.stringify(outcome));
        assert.ok(outcome.kind === 'accepted');
        assert.match(outcome.smsMessageSid, /^\S+$/);
        assert.equal(outcome.dateCreated, formatTimestamp(NOW, ZONE));
        assert.deepEqual(sim.records.at(-1), {
          time: NOW.toISOString(),
          smsMessageSid: outcome.smsMessageSid,
          appId: APP,
          templateId: '1',
          datas: ['123456', '5'],
          to: ['13800000001', '13800000002'],
          reqId,
        });
      });

      it('success without datas or reqId (template with no variables)', async () => {
        const outcome = await send(c, req({ templateId: '2', datas: [] }));
        assert.equal(outcome.kind, 'accepted', JSON.stringify(outcome));
        const record = sim.records.at(-1);
        assert.deepEqual(record?.datas, []);
        assert.equal(record?.reqId, undefined);
      });

      it('Chinese text and emoji round trip', async () => {
        const datas = ['您的验证码是：', '🎉👍🏽 ok'];
        assert.equal((await send(c, req({ datas }))).kind, 'accepted');
        assert.deepEqual(sim.records.at(-1)?.datas, datas);
      });

      it('XML special characters round trip', async () => {
        const datas = [`<b>&amp; "q" 'a'`, ' a & b < c > d '];
        assert.equal((await send(c, req({ datas }))).kind, 'accepted');
        assert.deepEqual(sim.records.at(-1)?.datas, datas);
      });

      it('line breaks (CRLF, CR, LF), tabs and character-reference look-alikes arrive exactly', async () => {
        const datas = ['line1\r\nline2\rline3\nend', '\ttab &#13; &amp;'];
        assert.equal((await send(c, req({ datas }))).kind, 'accepted');
        assert.deepEqual(sim.records.at(-1)?.datas, datas);
      });

      it('wrong token: 111109, account-fatal', async () => {
        const wrongToken = 'wrong0token00000000000000000000x';
        secretsSeen.add(wrongToken);
        assertRejected(
          await refused(req(), client(sim, format, { authToken: wrongToken })),
          '111109',
          'account-fatal',
        );
      });

      it('wrong account: 111141, account-fatal', async () => {
        assertRejected(
          await refused(
            req(),
            client(sim, format, { accountSid: '8a216da8nosuchaccount000000acc99' }),
          ),
          '111141',
          'account-fatal',
        );
      });

      it('timestamp 25 hours old: 111106, clock', async () => {
        const stale = client(sim, format, { now: () => new Date(NOW.getTime() - 25 * 3_600_000) });
        assertRejected(await refused(req(), stale), '111106', 'clock');
      });

      it('unknown app: 111181, account-fatal', async () => {
        assertRejected(
          await refused(req({ appId: '8a216da8nosuchapp00000000000app9' })),
          '111181',
          'account-fatal',
        );
      });

      it('unknown template: 112311, batch-rejected', async () => {
        assertRejected(await refused(req({ templateId: '999' })), '112311', 'batch-rejected');
      });

      it('wrong variable count: 160052, batch-rejected', async () => {
        assertRejected(await refused(req({ datas: ['only one'] })), '160052', 'batch-rejected');
      });

      it('blocked number: 160034, number-rejected', async () => {
        assertRejected(
          await refused(req({ to: ['13800000001', BLOCKED] })),
          '160034',
          'number-rejected',
        );
      });

      it('invalid number: 160042, number-rejected', async () => {
        assertRejected(await refused(req({ to: ['12345'] })), '160042', 'number-rejected');
      });

      it('more than 200 numbers (client max raised to 300): 160048, batch-rejected', async () => {
        const to = Array.from({ length: 201 }, (_, i) => `138${String(i).padStart(8, '0')}`);
        assertRejected(
          await refused(req({ to }), client(sim, format, { maxPerRequest: 300 })),
          '160048',
          'batch-rejected',
        );
      });

      it('reqId longer than 32 characters: 160055, batch-rejected', async () => {
        assertRejected(await refused(req({ reqId: 'r'.repeat(33) })), '160055', 'batch-rejected');
      });

      it('repeated reqId: 160054, duplicate-request, and only one record', async () => {
        const reqId = nextReqId('dup');
        assert.equal((await send(c, req({ reqId }))).kind, 'accepted');
        assertRejected(await refused(req({ reqId })), '160054', 'duplicate-request');
        assert.equal(sim.records.filter((r) => r.reqId === reqId).length, 1);
      });

      it('sig and Authorization come from one timestamp even when the clock ticks between calls', async () => {
        let t = NOW.getTime();
        const ticking = client(sim, format, { now: () => new Date((t += 1_000)) });
        assert.equal((await send(ticking, req())).kind, 'accepted');
        assert.equal((await send(ticking, req())).kind, 'accepted');
      });

      it('a UTC-signing client is accepted by a Shanghai provider (8 hours apart, within 24)', async () => {
        assert.equal(
          (await send(client(sim, format, { timezone: 'UTC' }), req())).kind,
          'accepted',
        );
      });
    });
  }
}

// ---------------------------------------------------------------------------------------------
// Faults: what the client makes of each, and what the simulator has recorded meanwhile.

const always = (kind: FaultRule['kind'], extra: Partial<FaultRule> = {}): FaultRule[] => [
  { kind, everyNth: 1, ...extra },
];

for (const format of ['json', 'xml'] as const) {
  describe(`faults, ${format}`, () => {
    it('cut-after-accept: in doubt, and the record HAS it', async () => {
      const sim = await simulator({ faults: always('cut-after-accept') });
      const reqId = nextReqId('cut-after');
      const outcome = await send(client(sim, format), req({ reqId }));
      assert.equal(outcome.kind, 'in-doubt', JSON.stringify(outcome));
      assert.equal(sim.records.length, 1);
      assert.equal(sim.records[0]?.reqId, reqId);
    });

    it('cut-after-accept, then the same reqId again: duplicate-request, still one record', async () => {
      const sim = await simulator({ faults: [{ kind: 'cut-after-accept', everyNth: 2 }] });
      const c = client(sim, format);
      assert.equal((await send(c, req({ reqId: nextReqId('warm') }))).kind, 'accepted'); // request 1
      const reqId = nextReqId('retry');
      assert.equal((await send(c, req({ reqId }))).kind, 'in-doubt'); // request 2: cut
      assertRejected(await send(c, req({ reqId })), '160054', 'duplicate-request'); // request 3
      assert.equal(sim.records.filter((r) => r.reqId === reqId).length, 1);
    });

    it('cut-before-accept: in doubt, and the record does NOT have it', async () => {
      const sim = await simulator({ faults: always('cut-before-accept') });
      const outcome = await send(client(sim, format), req({ reqId: nextReqId('cut-before') }));
      assert.equal(outcome.kind, 'in-doubt', JSON.stringify(outcome));
      assert.equal(sim.requestCount, 1);
      assert.equal(sim.records.length, 0);
    });

    it('stall with a short response timeout: in doubt', async () => {
      const sim = await simulator({ faults: always('stall') });
      const outcome = await send(client(sim, format, { responseTimeoutMs: 300 }), req());
      assert.equal(outcome.kind, 'in-doubt', JSON.stringify(outcome));
    });

    it('http500: in doubt, with the HTTP status', async () => {
      const sim = await simulator({ faults: always('http500') });
      const outcome = await send(client(sim, format), req());
      assert.equal(outcome.kind, 'in-doubt', JSON.stringify(outcome));
      assert.equal(outcome.kind === 'in-doubt' && outcome.httpStatus, 500);
      assert.equal(sim.records.length, 0);
    });

    it('status fault 160000: rejected, transient', async () => {
      const sim = await simulator({ faults: always('status', { statusCode: '160000' }) });
      assertRejected(await send(client(sim, format), req()), '160000', 'transient');
      assert.equal(sim.records.length, 0);
    });
  });
}

// ---------------------------------------------------------------------------------------------
// Every code of the public tables (shared/reference/provider-facts.md), answered by the simulator
// (numberCodes: a request holding the number is answered the code) and classed by the client.

const range = (from: number, to: number) =>
  Array.from({ length: to - from + 1 }, (_, i) => String(from + i));
const TABLE_CODES: Record<string, string[]> = {
  'account-fatal': [
    ...range(111100, 111105),
    '111107',
    '111108',
    '111109',
    '111110',
    '111113',
    ...range(111128, 111143),
    ...range(111169, 111182),
    '112303',
    '112310',
    '113302',
    '160053',
    '111115',
    '111212',
    '111226',
  ],
  clock: ['111106'],
  transient: [
    '111000',
    '111050',
    '111099',
    '111111',
    '111112',
    '111114',
    '111116',
    '160000',
    ...range(160001, 160010),
    '160016',
    '161000',
    '161042',
    '161099',
  ],
  'rate-limited': [
    '160038',
    '160039',
    '160040',
    '160041',
    '112314',
    '160015',
    '160022',
    '160021',
    '160056',
  ],
  'number-rejected': [
    '160042',
    '112316',
    '112317',
    '160034',
    '160051',
    '160068',
    '160072',
    '160073',
    '160074',
    '112319',
    '160013',
    '160059',
    '160070',
  ],
  'batch-rejected': [
    '112300',
    '112306',
    '160044',
    '112307',
    '112308',
    '112311',
    '112313',
    '112323',
    '160032',
    '160043',
    '160052',
    '160031',
    '160030',
    '160033',
    '160049',
    '160011',
    '160018',
    '160037',
    '160020',
    '160045',
    '160048',
    '160017',
    '160055',
    '160057',
    '112318',
    '112309',
    '112304',
    '112609',
    '112610',
    '112611',
    '112612',
  ],
  'duplicate-request': ['160054'],
  ambiguous: ['160050', '160063', '160064'],
  'outside-hours': ['160071'],
};

for (const format of ['json', 'xml'] as const) {
  describe(`every code of the public tables, ${format}`, () => {
    const entries = Object.entries(TABLE_CODES)
      .flatMap(([cls, codes]) => codes.map((code) => ({ cls, code })))
      .map((e, i) => ({ ...e, number: `13${String(i).padStart(9, '0')}` }));
    let sim: RunningSimulator;
    let c: ProviderClient;
    const told: string[] = [];
    before(async () => {
      sim = await simulator({
        numberCodes: Object.fromEntries([
          ...entries.map((e): [string, string] => [e.number, e.code]),
          ['13977777777', '177777'],
        ]),
      });
      c = client(sim, format, { onUnknownCode: (code) => told.push(code) });
    });

    it('each is answered by the simulator and classed by the client as the tables say', async () => {
      for (const { cls, code, number } of entries)
        assertRejected(await send(c, req({ to: [number] })), code, cls);
      assert.equal(sim.records.length, 0);
      assert.deepEqual(told, [], 'every code of the tables is known');
    });

    it('a code the tables do not explain: batch-rejected, told once', async () => {
      assertRejected(await send(c, req({ to: ['13977777777'] })), '177777', 'batch-rejected');
      assertRejected(await send(c, req({ to: ['13977777777'] })), '177777', 'batch-rejected');
      assert.deepEqual(told, ['177777']);
    });
  });
}

// ---------------------------------------------------------------------------------------------
// TLS trust and the wire details the simulator does not report back.

describe('https trust', () => {
  it('an untrusted CA: not-sent, and nothing reached the simulator', async () => {
    const sim = await simulator({ https: true });
    const outcome = await send(client(sim, 'json', { caPem: undefined }), req());
    assert.equal(outcome.kind, 'not-sent', JSON.stringify(outcome));
    assert.equal(sim.requestCount, 0);
  });

  it('the CA written by the simulator to caFile is trusted by the client', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'smsdrop-contract-'));
    cleanups.push(() => fs.promises.rm(dir, { recursive: true, force: true }));
    const caFile = path.join(dir, 'ca.pem');
    const sim = await simulator({ https: true, caFile });
    assert.equal(sim.caFile, caFile);
    const c = createProviderClient({
      baseUrl: sim.url,
      accountSid: SID,
      authToken: TOKEN,
      format: 'xml',
      maxPerRequest: 200,
      connectTimeoutMs: 2_000,
      responseTimeoutMs: 5_000,
      timezone: ZONE,
      now: clock,
      caFile,
    });
    cleanups.push(() => c.close());
    assert.equal((await send(c, req())).kind, 'accepted');
  });
});

describe('wire capture', () => {
  it('sig is the uppercase MD5 over the very timestamp carried in Authorization', async () => {
    const seen: Array<{ url: string; authorization: string }> = [];
    const server = http.createServer((rq, rs) => {
      seen.push({ url: rq.url ?? '', authorization: String(rq.headers.authorization) });
      rq.resume();
      rq.on('end', () =>
        rs.writeHead(200, { 'content-type': 'application/json' }).end('{"statusCode":"160000"}'),
      );
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    cleanups.push(() => new Promise((resolve) => server.close(() => resolve())));
    const { port } = server.address() as AddressInfo;
    let t = NOW.getTime();
    const c = createProviderClient({
      baseUrl: `http://127.0.0.1:${port}`,
      accountSid: SID,
      authToken: TOKEN,
      format: 'json',
      maxPerRequest: 200,
      connectTimeoutMs: 2_000,
      responseTimeoutMs: 5_000,
      now: () => new Date((t += 1_000)),
    });
    cleanups.push(() => c.close());
    await send(c, req());
    await send(c, req());
    assert.equal(seen.length, 2);
    for (const s of seen) {
      const [sid, stamp] = Buffer.from(s.authorization, 'base64').toString('utf8').split(':');
      assert.equal(sid, SID);
      assert.match(stamp ?? '', /^\d{14}$/);
      const sig = new URL(s.url, 'http://x').searchParams.get('sig');
      assert.equal(
        sig,
        createHash('md5').update(`${SID}${TOKEN}${stamp}`).digest('hex').toUpperCase(),
      );
      secretsSeen.add(String(sig)).add(s.authorization);
    }
    assert.notEqual(
      seen[0]?.authorization,
      seen[1]?.authorization,
      'each request is signed afresh',
    );
  });
});

describe('secrets', () => {
  it('no token, sig or Authorization value in any outcome or printed line of this suite', () => {
    assert.ok(outcomes.length > 40, `expected many outcomes, got ${outcomes.length}`);
    const text = [...outcomes.map((o) => JSON.stringify(o)), ...printed].join('\n');
    for (const secret of secretsSeen)
      assert.ok(!text.includes(secret), `a secret appears in: ${text.slice(0, 200)}`);
    assert.ok(!/sig=[0-9A-F]{32}/.test(text), 'a sig query parameter appears');
  });
});
