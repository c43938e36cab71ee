import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { XMLParser } from 'fast-xml-parser';
import {
  acceptHeader,
  contentType,
  encodeBody,
  encodeBodyBytes,
  escapeXml,
  hasXmlInvalidChar,
} from '../../src/provider/encode.js';
import type { TemplateSmsRequest } from '../../src/provider/types.js';

const base: TemplateSmsRequest = {
  to: ['13800000001', '13800000002'],
  appId: 'app1',
  templateId: '1',
  datas: ['6532', '5'],
};
const PROLOG = '<?xml version="1.0" encoding="UTF-8"?>';

describe('encodeBody json', () => {
  it('joins numbers with commas and keeps datas in order', () => {
    assert.deepEqual(JSON.parse(encodeBody({ ...base, reqId: 'r1' }, 'json')), {
      to: '13800000001,13800000002',
      appId: 'app1',
      templateId: '1',
      datas: ['6532', '5'],
      reqId: 'r1',
    });
  });

  it('omits datas when empty and reqId when absent', () => {
    const body = JSON.parse(encodeBody({ ...base, datas: [] }, 'json')) as Record<string, unknown>;
    assert.deepEqual(Object.keys(body), ['to', 'appId', 'templateId']);
  });

  it('passes Chinese text and emoji as UTF-8, not \\u escapes', () => {
    const body = encodeBody({ ...base, datas: ['验证码', '🎉👍'] }, 'json');
    assert.ok(body.includes('"验证码"'));
    assert.ok(body.includes('🎉👍'));
    assert.deepEqual((JSON.parse(body) as { datas: string[] }).datas, ['验证码', '🎉👍']);
  });
});

describe('encodeBody xml', () => {
  it('has the UTF-8 prolog, root TemplateSMS and children in order', () => {
    assert.equal(
      encodeBody({ ...base, reqId: 'r1' }, 'xml'),
      `${PROLOG}<TemplateSMS><to>13800000001,13800000002</to><appId>app1</appId><templateId>1</templateId>` +
        '<datas><data>6532</data><data>5</data></datas><reqId>r1</reqId></TemplateSMS>',
    );
  });

  it('omits datas when empty', () => {
    const xml = encodeBody({ ...base, datas: [] }, 'xml');
    assert.ok(!xml.includes('<datas>'));
    assert.ok(!xml.includes('<reqId>'));
  });

  it('escapes & < > " \' and round-trips them through an XML parser', () => {
    const tricky = `a&b<c>d"e'f &amp;`;
    const xml = encodeBody({ ...base, datas: [tricky, '中文😀'] }, 'xml');
    assert.ok(xml.includes('<data>a&amp;b&lt;c&gt;d&quot;e&apos;f &amp;amp;</data>'));
    const parsed = new XMLParser({ parseTagValue: false }).parse(xml) as {
      TemplateSMS: { datas: { data: string[] } };
    };
    assert.deepEqual(parsed.TemplateSMS.datas.data, [tricky, '中文😀']);
  });

  it('escapeXml leaves other text alone', () => {
    assert.equal(escapeXml('plain 文本 🙂'), 'plain 文本 🙂');
  });

  it('detects characters XML 1.0 cannot carry', () => {
    assert.equal(hasXmlInvalidChar('ok\ttab\nline'), false);
    assert.equal(hasXmlInvalidChar('emoji 😀'), false);
    assert.equal(hasXmlInvalidChar('bell\u0007'), true);
    assert.equal(hasXmlInvalidChar('lone \uD83D surrogate'), true);
  });
});

describe('headers', () => {
  it('content type carries charset, accept does not', () => {
    assert.equal(contentType('json'), 'application/json;charset=utf-8');
    assert.equal(contentType('xml'), 'application/xml;charset=utf-8');
    assert.equal(acceptHeader('json'), 'application/json');
    assert.equal(acceptHeader('xml'), 'application/xml');
  });
});

describe('encodeBodyBytes', () => {
  const hundredNumbers = Array.from({ length: 200 }, (_, i) => String(13800000000 + i));
  const cases: Array<[string, TemplateSmsRequest]> = [
    ['digits and Chinese values', { ...base, to: hundredNumbers, datas: ['双十一大促', '8折'] }],
    ['a reqId, no values', { ...base, datas: [], reqId: 'r-1' }],
    ['emoji and escapes in values', { ...base, datas: ['🎉"\\', 'a\nb\u0001'] }],
    ['a number JSON must escape', { ...base, to: ['1380000"001', '13800000002'] }],
    ['a number with a backslash', { ...base, to: ['138\\00000001'] }],
    ['a non-ASCII number', { ...base, to: ['１３８００００００００１'] }],
    ['a number with a control character', { ...base, to: ['138\t00000001'] }],
    ['a lone surrogate', { ...base, to: ['138\ud800'], datas: ['\udc00'] }],
    ['no numbers', { ...base, to: [] }],
  ];
  for (const [name, req] of cases) {
    for (const format of ['json', 'xml'] as const) {
      it(`gives the bytes of encodeBody (${format}, ${name})`, () => {
        assert.deepEqual(
          encodeBodyBytes(req, format),
          Buffer.from(encodeBody(req, format), 'utf8'),
        );
      });
    }
  }
});
