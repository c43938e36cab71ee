// Headers, framing, body shape and the business checks, with the provider's codes.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { RunningSimulator } from '../../src/simulator/index.js';
import { APP, buildCall, call, codeIn, rawExchange, rawRequest, start } from './helpers.js';

const PROLOG = '<?xml version="1.0" encoding="UTF-8"?>';

describe('simulator: headers and framing', () => {
  let sim: RunningSimulator;
  before(async () => {
    sim = await start();
  });
  after(() => sim.close());

  test('Accept and Content-Type are matched case-insensitively, with optional spaces', async () => {
    assert.equal(
      (
        await call(sim, {
          accept: 'Application/JSON',
          contentType: 'application/json; charset=UTF-8',
        })
      ).code,
      '000000',
    );
    assert.equal(
      (await call(sim, { format: 'xml', contentType: 'APPLICATION/XML ;charset = utf-8' })).code,
      '000000',
    );
  });

  test('Accept picks the answer format, independently of the body format', async () => {
    const answer = await call(sim, { format: 'xml', accept: 'application/json' });
    assert.match(answer.text, /^\{"statusCode":"000000"/);
  });

  test('the forms the official SDKs send: bare application/json, a trailing ";", Accept with a charset', async () => {
    assert.equal((await call(sim, { contentType: 'application/json' })).code, '000000');
    assert.equal(
      (await call(sim, { contentType: 'application/json;charset=utf-8;' })).code,
      '000000',
    );
    assert.equal((await call(sim, { accept: 'application/json;charset=UTF-8' })).code, '000000');
    assert.equal(
      (await call(sim, { format: 'xml', contentType: 'application/xml' })).code,
      '000000',
    );
  });

  test('112610: Accept missing or not allowed', async () => {
    assert.equal((await call(sim, { accept: 'text/plain' })).code, '112610');
    assert.equal((await call(sim, { accept: '*/*' })).code, '112610');
    assert.equal((await call(sim, { accept: 'application/json;charset=gbk' })).code, '112610');
    const { path, headers, body } = buildCall();
    const { accept: _left, ...withoutAccept } = headers;
    assert.equal(
      codeIn(
        (
          await rawExchange(
            sim,
            rawRequest(
              path,
              { ...withoutAccept, 'content-length': String(Buffer.byteLength(body)) },
              body,
            ),
          )
        ).body,
      ),
      '112610',
    );
  });

  test('112611: Content-Type missing or not allowed', async () => {
    assert.equal((await call(sim, { contentType: 'application/json;charset=gbk' })).code, '112611');
    assert.equal((await call(sim, { contentType: 'text/xml;charset=utf-8' })).code, '112611');
    assert.equal((await call(sim, { contentType: 'application/json;;' })).code, '112611');
  });

  test('160031: Content-Type does not match the body', async () => {
    const xml = buildCall({ format: 'xml' }).body;
    assert.equal((await call(sim, { format: 'json', body: xml })).code, '160031');
    const json = buildCall({ format: 'json' }).body;
    assert.equal((await call(sim, { format: 'xml', body: json })).code, '160031');
  });

  test('112609: a chunked body (no Content-Length)', async () => {
    const { path, headers, body } = buildCall();
    const chunked = `${body.length.toString(16)}\r\n${body}\r\n0\r\n\r\n`;
    const answer = await rawExchange(
      sim,
      rawRequest(path, { ...headers, 'transfer-encoding': 'chunked' }, chunked),
    );
    assert.match(answer.head, /^HTTP\/1\.1 200/);
    assert.equal(codeIn(answer.body), '112609');
  });

  test('112612: Content-Length counted in characters instead of bytes (body cut short)', async () => {
    const { path, headers, body } = buildCall({
      payload: { to: '13800000001', datas: ['您好', '世界'] },
    });
    const bytes = Buffer.from(body, 'utf8');
    const answer = await rawExchange(
      sim,
      rawRequest(path, { ...headers, 'content-length': String(body.length) }, bytes),
    );
    assert.equal(codeIn(answer.body), '112612');
    const exact = await rawExchange(
      sim,
      rawRequest(path, { ...headers, 'content-length': String(bytes.length) }, bytes),
    );
    assert.equal(codeIn(exact.body), '000000');
  });

  test('160030: empty body', async () => {
    assert.equal((await call(sim, { body: '' })).code, '160030');
  });

  test('160031: a body that is not UTF-8', async () => {
    const { path, headers } = buildCall();
    const latin1 = Buffer.from(
      `{"to":"13800000001","appId":"${APP}","templateId":"1","datas":["caf\xe9","b"]}`,
      'latin1',
    );
    const answer = await rawExchange(
      sim,
      rawRequest(path, { ...headers, 'content-length': String(latin1.length) }, latin1),
    );
    assert.equal(codeIn(answer.body), '160031');
  });
});

describe('simulator: body shape', () => {
  let sim: RunningSimulator;
  before(async () => {
    sim = await start();
  });
  after(() => sim.close());

  const xml = (inner: string, prolog = PROLOG) =>
    call(sim, { format: 'xml', body: `${prolog}${inner}` });
  const good = `<TemplateSMS><to>13800000001</to><appId>${APP}</appId><templateId>1</templateId><datas><data>a</data><data>b</data></datas></TemplateSMS>`;

  test('XML: prolog variants that are allowed', async () => {
    assert.equal((await xml(good)).code, '000000');
    assert.equal(
      (await xml(good, "<?xml version='1.0' encoding='utf-8' standalone='yes'?>\n")).code,
      '000000',
    );
    assert.equal((await xml(`\n  ${good.replace(/></g, '>\n  <')}\n`)).code, '000000');
  });

  test('160031: XML prolog missing or wrong', async () => {
    assert.equal((await xml(good, '')).code, '160031');
    assert.equal((await xml(good, '<?xml version="1.1" encoding="UTF-8"?>')).code, '160031');
    assert.equal((await xml(good, '<?xml version="1.0" encoding="GBK"?>')).code, '160031');
    assert.equal((await xml(good, ` ${PROLOG}`)).code, '160031');
    assert.equal((await xml(good, `\ufeff${PROLOG}`)).code, '160031');
  });

  test('160031: XML not well formed, wrong root, extra root, repeated or nested fields', async () => {
    assert.equal((await xml(good.replace('</to>', ''))).code, '160031');
    assert.equal((await xml(good.replace(/TemplateSMS/g, 'templateSMS'))).code, '160031');
    assert.equal((await xml(`${good}<TemplateSMS/>`)).code, '160031');
    assert.equal(
      (await xml(good.replace('<to>13800000001</to>', '<to>13800000001</to><to>13800000002</to>')))
        .code,
      '160031',
    );
    assert.equal(
      (await xml(good.replace('<to>13800000001</to>', '<to><n>13800000001</n></to>'))).code,
      '160031',
    );
    assert.equal(
      (await xml(good.replace('<data>a</data>', '<data><b>a</b></data>'))).code,
      '160031',
    );
    assert.equal((await xml(good.replace(`<appId>${APP}</appId>`, ''))).code, '160031');
    assert.equal((await xml(good.replace('<datas>', '<datas><item>x</item>'))).code, '160031');
    assert.equal((await xml(good.replace('<to>', '<unknown>1</unknown><to>'))).code, '160031');
  });

  test('XML data values are kept exactly: spaces, entities, CDATA, Chinese', async () => {
    const before = sim.records.length;
    const datas =
      '<datas><data>  two spaces  </data><data>&amp;&lt;中文&gt; <![CDATA[<raw>]]></data></datas>';
    assert.equal((await xml(good.replace(/<datas>.*<\/datas>/, datas))).code, '000000');
    assert.deepEqual(sim.records[before]?.datas, ['  two spaces  ', '&<中文> <raw>']);
  });

  test('XML: datas may be omitted or empty for a template without variables', async () => {
    const none = good.replace('<templateId>1</templateId>', '<templateId>3</templateId>');
    assert.equal((await xml(none.replace(/<datas>.*<\/datas>/, ''))).code, '000000');
    assert.equal((await xml(none.replace(/<datas>.*<\/datas>/, '<datas/>'))).code, '000000');
    assert.equal(
      (await xml(none.replace(/<datas>.*<\/datas>/, '<datas>\n</datas>'))).code,
      '000000',
    );
  });

  const json = (body: unknown) =>
    call(sim, { format: 'json', body: typeof body === 'string' ? body : JSON.stringify(body) });
  const valid = { to: '13800000001', appId: APP, templateId: '1', datas: ['a', 'b'] };

  test('160031: JSON not an object, members not strings, datas not an array of strings, unknown member', async () => {
    assert.equal((await json('{"to":')).code, '160031');
    assert.equal((await json([valid])).code, '160031');
    assert.equal((await json({ ...valid, to: 13800000001 })).code, '160031');
    assert.equal((await json({ ...valid, templateId: 1 })).code, '160031');
    assert.equal((await json({ ...valid, datas: 'a,b' })).code, '160031');
    assert.equal((await json({ ...valid, datas: ['a', 2] })).code, '160031');
    assert.equal((await json({ ...valid, datas: null })).code, '160031');
    assert.equal((await json({ ...valid, reqId: 7 })).code, '160031');
    assert.equal((await json({ ...valid, reqid: 'x' })).code, '160031');
    const { appId: _omitted, ...noApp } = valid;
    assert.equal((await json(noApp)).code, '160031');
  });

  test('JSON: datas kept exactly, may be omitted for a template without variables', async () => {
    const before = sim.records.length;
    assert.equal((await json({ ...valid, datas: [' x ', ''] })).code, '000000');
    assert.deepEqual(sim.records[before]?.datas, [' x ', '']);
    assert.equal((await json({ to: '13800000001', appId: APP, templateId: '3' })).code, '000000');
  });
});

describe('simulator: business checks', () => {
  let sim: RunningSimulator;
  before(async () => {
    sim = await start({ blocked: ['13900000009'] });
  });
  after(() => sim.close());

  const send = (
    to: string,
    extra: { appId?: string; templateId?: string; datas?: string[]; reqId?: string } = {},
    format: 'json' | 'xml' = 'json',
  ) => call(sim, { format, payload: { to, ...extra } });

  test('111181: app unknown', async () => {
    assert.equal((await send('13800000001', { appId: 'nope' })).code, '111181');
  });

  test('112311: template unknown', async () => {
    assert.equal((await send('13800000001', { templateId: '99' })).code, '112311');
  });

  test('160052: variable count differs from the template', async () => {
    assert.equal((await send('13800000001', { datas: ['only one'] })).code, '160052');
    assert.equal(
      (await send('13800000001', { templateId: '3', datas: ['x'] }, 'xml')).code,
      '160052',
    );
  });

  test('112306: no number; 160048: more than 200', async () => {
    assert.equal((await send('')).code, '112306');
    const numbers = (n: number) =>
      Array.from({ length: n }, (_, i) => `138${String(i).padStart(8, '0')}`).join(',');
    assert.equal((await send(numbers(201))).code, '160048');
    assert.equal((await send(numbers(200), {}, 'xml')).code, '000000');
    assert.equal(sim.records.at(-1)?.to.length, 200);
  });

  test('160042: a malformed number anywhere in the list', async () => {
    for (const to of [
      '12800000001',
      '1380000001',
      '+8613800000001',
      '13800000001,',
      '13800000001, 13800000002',
      '0012345',
      '00' + '1'.repeat(16),
    ]) {
      assert.equal((await send(to)).code, '160042', to);
    }
    assert.equal((await send('0044207946000')).code, '000000');
  });

  test('160045: a number repeated', async () => {
    assert.equal((await send('13800000001,13800000002,13800000001')).code, '160045');
  });

  test('160055: reqId longer than 32 characters', async () => {
    assert.equal((await send('13800000001', { reqId: 'x'.repeat(33) })).code, '160055');
    assert.equal((await send('13800000001', { reqId: 'y'.repeat(32) }, 'xml')).code, '000000');
  });

  test('160059: an international number in a request with others (bulk); alone it goes', async () => {
    assert.equal((await send('13800000001,0044207946000')).code, '160059');
    assert.equal((await send('0085212345678,0044207946000')).code, '160059');
    assert.equal((await send('0085212345678')).code, '000000');
  });

  test('160034: a blocked number', async () => {
    assert.equal((await send('13800000001,13900000009')).code, '160034');
  });

  test('an accepted request is recorded with its split numbers, data and reqId', async () => {
    assert.equal(
      (await send('13800000011,13800000012', { datas: ['p', 'q'], reqId: 'rec-1' })).code,
      '000000',
    );
    const r = sim.records.at(-1)!;
    assert.deepEqual(
      { ...r, time: undefined, smsMessageSid: undefined },
      {
        time: undefined,
        smsMessageSid: undefined,
        appId: APP,
        templateId: '1',
        datas: ['p', 'q'],
        to: ['13800000011', '13800000012'],
        reqId: 'rec-1',
      },
    );
    assert.equal(r.time, '2024-05-01T12:00:00.000Z');
  });
});
