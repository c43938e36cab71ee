import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { decodeResponse, isMalformed } from '../../src/provider/decode.js';

const SID = '0123456789abcdef0123456789abcdef';

describe('decodeResponse json', () => {
  it('reads a success in any key order', () => {
    const a = decodeResponse(
      `{"statusCode":"000000","templateSMS":{"smsMessageSid":"${SID}","dateCreated":"20240102030405"}}`,
      'json',
    );
    const b = decodeResponse(
      `{"templateSMS":{"dateCreated":"20240102030405","smsMessageSid":"${SID}"},"statusCode":"000000"}`,
      'json',
    );
    const expected = { statusCode: '000000', smsMessageSid: SID, dateCreated: '20240102030405' };
    assert.deepEqual(a, expected);
    assert.deepEqual(b, expected);
  });

  it('reads an error with statusMsg, untouched', () => {
    assert.deepEqual(
      decodeResponse('{"statusCode":"160031","statusMsg":"【短信】参数解析失败"}', 'json'),
      {
        statusCode: '160031',
        statusMsg: '【短信】参数解析失败',
      },
    );
  });

  it('a statusMsg that is not a string leaves a clear code clear (it is dropped, never a doubt)', () => {
    for (const msg of ['null', '7', '{"a":1}', '["x"]']) {
      assert.deepEqual(
        decodeResponse(`{"statusCode":"111115","statusMsg":${msg}}`, 'json'),
        { statusCode: '111115' },
        msg,
      );
    }
    const ok = decodeResponse(
      `{"statusCode":"000000","statusMsg":null,"templateSMS":{"smsMessageSid":"${SID}","dateCreated":"20240102030405"}}`,
      'json',
    );
    assert.deepEqual(ok, {
      statusCode: '000000',
      smsMessageSid: SID,
      dateCreated: '20240102030405',
    });
  });

  it('a numeric statusCode is malformed: 0 must never pass for "000000"', () => {
    assert.ok(
      isMalformed(
        decodeResponse(`{"statusCode":0,"templateSMS":{"smsMessageSid":"${SID}"}}`, 'json'),
      ),
    );
  });

  it('000000 without smsMessageSid is malformed', () => {
    assert.ok(isMalformed(decodeResponse('{"statusCode":"000000"}', 'json')));
    assert.ok(
      isMalformed(
        decodeResponse(
          '{"statusCode":"000000","templateSMS":{"dateCreated":"20240102030405"}}',
          'json',
        ),
      ),
    );
  });

  it('the success member must be templateSMS with a lowercase t', () => {
    assert.ok(
      isMalformed(
        decodeResponse(`{"statusCode":"000000","TemplateSMS":{"smsMessageSid":"${SID}"}}`, 'json'),
      ),
    );
  });

  it('garbage, truncated JSON and non-objects are malformed', () => {
    for (const body of ['', 'oops', '{"statusCode":"000', '[1,2]', 'null']) {
      assert.ok(isMalformed(decodeResponse(body, 'json')), body);
    }
  });
});

describe('decodeResponse xml', () => {
  const ok = `<?xml version="1.0" encoding="UTF-8" standalone="yes"?><Response><statusCode>000000</statusCode><TemplateSMS><smsMessageSid>${SID}</smsMessageSid><dateCreated>20240102030405</dateCreated></TemplateSMS></Response>`;

  it('reads a success, statusCode kept as the string 000000', () => {
    assert.deepEqual(decodeResponse(ok, 'xml'), {
      statusCode: '000000',
      smsMessageSid: SID,
      dateCreated: '20240102030405',
    });
  });

  it('reads a success in any element order, with whitespace between elements', () => {
    const xml = `<Response>\n  <TemplateSMS>\n <dateCreated>20240102030405</dateCreated><smsMessageSid>${SID}</smsMessageSid></TemplateSMS>\n  <statusCode>000000</statusCode>\n</Response>`;
    assert.deepEqual(decodeResponse(xml, 'xml'), {
      statusCode: '000000',
      smsMessageSid: SID,
      dateCreated: '20240102030405',
    });
  });

  it('reads an error with statusMsg and entities', () => {
    assert.deepEqual(
      decodeResponse(
        '<Response><statusCode>112311</statusCode><statusMsg>模板 &amp; 不存在</statusMsg></Response>',
        'xml',
      ),
      {
        statusCode: '112311',
        statusMsg: '模板 & 不存在',
      },
    );
  });

  it('ill-formed XML, a wrong root, or a missing TemplateSMS is malformed', () => {
    for (const body of [
      '<Response><statusCode>000000</statusCode>',
      `<Answer><statusCode>000000</statusCode><TemplateSMS><smsMessageSid>${SID}</smsMessageSid></TemplateSMS></Answer>`,
      '<Response><statusCode>000000</statusCode></Response>',
      '<Response><statusMsg>no code</statusMsg></Response>',
    ]) {
      assert.ok(isMalformed(decodeResponse(body, 'xml')), body);
    }
  });
});

describe('format sniffing', () => {
  it('decodes XML when JSON was asked for, and JSON when XML was', () => {
    assert.equal(
      (
        decodeResponse('  <Response><statusCode>160000</statusCode></Response>', 'json') as {
          statusCode: string;
        }
      ).statusCode,
      '160000',
    );
    assert.equal(
      (decodeResponse('\n{"statusCode":"160000"}', 'xml') as { statusCode: string }).statusCode,
      '160000',
    );
  });
});
