// URL and credential checks: each refusal the real provider gives, in its order, in both formats.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { RunningSimulator } from '../../src/simulator/index.js';
import { authOf, call, NOON, SID, sigOf, stampAt, start } from './helpers.js';

describe('simulator: URL and authentication', () => {
  let sim: RunningSimulator;
  before(async () => {
    sim = await start();
  });
  after(() => sim.close());

  test('a correctly signed request is accepted, in JSON and in XML', async () => {
    const json = await call(sim, { format: 'json' });
    assert.equal(json.status, 200);
    assert.match(
      json.text,
      /^\{"statusCode":"000000","templateSMS":\{"smsMessageSid":"[0-9a-f]{32}","dateCreated":"20240501200000"\}\}$/,
      'dateCreated in China time, whatever zone the simulator reads stamps in',
    );
    assert.match(json.contentType, /^application\/json/);
    const xml = await call(sim, { format: 'xml' });
    assert.match(
      xml.text,
      /^<\?xml version="1.0" encoding="UTF-8" standalone="yes"\?><Response><statusCode>000000<\/statusCode><TemplateSMS><smsMessageSid>[0-9a-f]{32}<\/smsMessageSid><dateCreated>20240501200000<\/dateCreated><\/TemplateSMS><\/Response>$/,
    );
    assert.match(xml.contentType, /^application\/xml/);
  });

  test('errors come back as HTTP 200 with statusCode and statusMsg, in the format Accept asks for', async () => {
    const json = await call(sim, { format: 'json', sig: 'F'.repeat(32) });
    assert.equal(json.status, 200);
    const parsed = JSON.parse(json.text) as { statusCode: string; statusMsg: string };
    assert.equal(parsed.statusCode, '111109');
    assert.ok(parsed.statusMsg.length > 0);
    const xml = await call(sim, { format: 'xml', sig: 'F'.repeat(32) });
    assert.match(
      xml.text,
      /^<\?xml version="1.0" encoding="UTF-8" standalone="yes"\?><Response><statusCode>111109<\/statusCode><statusMsg>[^<]+<\/statusMsg><\/Response>$/,
    );
  });

  test('an unknown path is HTTP 404, a GET on the operation 405', async () => {
    assert.equal((await call(sim, { path: '/2013-12-25/Accounts/x/SMS/TemplateSMS' })).status, 404);
    assert.equal(
      (await call(sim, { path: `/2013-12-26/Accounts/${SID}/SMS/TemplateSMS/` })).status,
      404,
    );
    assert.equal((await call(sim, { method: 'GET' })).status, 405);
  });

  test('111141: the account in the path is unknown', async () => {
    const other = 'bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb2';
    assert.equal((await call(sim, { sid: other })).code, '111141');
  });

  test('111101: Authorization missing', async () => {
    assert.equal((await call(sim, { authorization: null })).code, '111101');
  });

  test('111102: Authorization is not Base64 (a "Basic " prefix included)', async () => {
    const stamp = stampAt(NOON);
    assert.equal((await call(sim, { authorization: `Basic ${authOf(stamp)}` })).code, '111102');
    assert.equal((await call(sim, { authorization: '%%%not-base64%%%' })).code, '111102');
    assert.equal(
      (await call(sim, { authorization: authOf(stamp).replace(/=+$/, '') })).code,
      '111102',
    );
  });

  test('111104 / 111105: the account id or the timestamp in Authorization is empty', async () => {
    const stamp = stampAt(NOON);
    assert.equal(
      (await call(sim, { authorization: Buffer.from(`:${stamp}`).toString('base64') })).code,
      '111104',
    );
    assert.equal(
      (await call(sim, { authorization: Buffer.from(`${SID}:`).toString('base64') })).code,
      '111105',
    );
  });

  test('111103: Authorization decodes to something other than sid:timestamp', async () => {
    const stamp = stampAt(NOON);
    assert.equal(
      (await call(sim, { authorization: Buffer.from(`${SID}${stamp}`).toString('base64') })).code,
      '111103',
    );
    assert.equal(
      (await call(sim, { authorization: Buffer.from(`${SID}:${stamp}:x`).toString('base64') }))
        .code,
      '111103',
    );
  });

  test('111107: the account in Authorization differs from the path', async () => {
    const stamp = stampAt(NOON);
    assert.equal((await call(sim, { authorization: authOf(stamp, 'someoneelse') })).code, '111107');
  });

  test('111113: the timestamp is not yyyyMMddHHmmss', async () => {
    for (const stamp of [
      '2024050112000',
      '2024-05-01T1200',
      '20240501120000Z',
      '20240230120000',
      '20240501250000',
    ]) {
      assert.equal((await call(sim, { stamp })).code, '111113', stamp);
    }
  });

  test('111106: a timestamp more than 24 h old or ahead', async () => {
    assert.equal(
      (await call(sim, { stamp: stampAt(new Date(NOON.getTime() - 24 * 3600_000 - 1000)) })).code,
      '111106',
    );
    assert.equal(
      (await call(sim, { stamp: stampAt(new Date(NOON.getTime() + 24 * 3600_000 + 1000)) })).code,
      '111106',
    );
    assert.equal(
      (await call(sim, { stamp: stampAt(new Date(NOON.getTime() - 23 * 3600_000)) })).code,
      '000000',
    );
  });

  test('a client signing in Asia/Shanghai time is accepted by a simulator on UTC', async () => {
    assert.equal((await call(sim, { stamp: stampAt(NOON, 8) })).code, '000000');
  });

  test('111108: sig missing or empty', async () => {
    assert.equal((await call(sim, { sig: null })).code, '111108');
    assert.equal((await call(sim, { sig: '' })).code, '111108');
  });

  test('111109: sig wrong, or right but in lowercase', async () => {
    const stamp = stampAt(NOON);
    assert.equal((await call(sim, { sig: sigOf(stamp).toLowerCase() })).code, '111109');
    assert.equal((await call(sim, { sig: sigOf(stamp, SID, 'another-token') })).code, '111109');
    // Signed with a different timestamp than the one in Authorization.
    assert.equal((await call(sim, { stamp, sig: sigOf(stampAt(NOON, 1)) })).code, '111109');
  });

  test('the checks come in the provider order: account before signature before body', async () => {
    const garbage = { body: 'not a body', sig: 'bad' };
    assert.equal((await call(sim, { ...garbage, sid: 'nobody' })).code, '111141');
    assert.equal((await call(sim, { ...garbage, authorization: null })).code, '111101');
    assert.equal((await call(sim, garbage)).code, '111109');
    assert.equal((await call(sim, { body: 'not a body' })).code, '160031');
  });
});

describe('simulator: time zone of the timestamp', () => {
  test('a simulator on Asia/Shanghai reads the stamp as Shanghai wall time', async () => {
    const sim = await start({ timezone: 'Asia/Shanghai' });
    try {
      const local = await call(sim, { stamp: stampAt(NOON, 8) });
      assert.equal(local.code, '000000');
      assert.match(local.text, /"dateCreated":"20240501200000"/);
      // UTC wall time read as Shanghai is 8 h in the past: still inside the window.
      assert.equal((await call(sim, { stamp: stampAt(NOON) })).code, '000000');
      // Shanghai wall time 25 h ahead of now: outside the window.
      assert.equal((await call(sim, { stamp: stampAt(NOON, 8 + 24 + 1) })).code, '111106');
    } finally {
      await sim.close();
    }
  });
});
