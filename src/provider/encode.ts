// Request bodies, shaped exactly as shared/spec/template-sms-api.md §2.1 says, in JSON or XML.
// Values pass through as UTF-8 text (Chinese, emoji); XML escapes the five special characters.
import type { BodyFormat, TemplateSmsRequest } from './types.js';

export function contentType(format: BodyFormat): string {
  return format === 'json' ? 'application/json;charset=utf-8' : 'application/xml;charset=utf-8';
}

export function acceptHeader(format: BodyFormat): string {
  return format === 'json' ? 'application/json' : 'application/xml';
}

/** The request body text. `datas` is omitted when empty, `reqId` when absent or empty. */
export function encodeBody(req: TemplateSmsRequest, format: BodyFormat): string {
  return format === 'json' ? encodeJson(req) : encodeXml(req);
}

/**
 * Printable ASCII but `"` and `\`: JSON.stringify writes such text as it is, and UTF-8 and Latin-1
 * give it the same bytes.
 */
const JSON_PLAIN_ASCII = /^[\x20\x21\x23-\x5b\x5d-\x7e]*$/;
const TO_OPENING = '{"to":"';

/**
 * The request body's bytes: exactly Buffer.from(encodeBody(req, format), 'utf8'). The numbers are
 * most of a JSON body (200 of them, ~2.6 kB) and, as digits, need no escaping: they are copied as
 * Latin-1 bytes, not scanned by JSON.stringify and then transcoded to UTF-8 with the values (whose
 * Chinese would make the whole body two-byte text).
 */
export function encodeBodyBytes(req: TemplateSmsRequest, format: BodyFormat): Buffer {
  if (format !== 'json') return Buffer.from(encodeXml(req), 'utf8');
  const to = Array.isArray(req.to) ? req.to.join(',') : undefined;
  if (to === undefined || !JSON_PLAIN_ASCII.test(to)) return Buffer.from(encodeJson(req), 'utf8');
  // {"to":"",...}: the numbers go between its first quotes
  const rest = encodeJson({ ...req, to: [] }).slice(TO_OPENING.length);
  const body = Buffer.allocUnsafe(TO_OPENING.length + to.length + Buffer.byteLength(rest, 'utf8'));
  body.write(TO_OPENING, 0, 'latin1');
  body.write(to, TO_OPENING.length, 'latin1');
  body.write(rest, TO_OPENING.length + to.length, 'utf8');
  return body;
}

function encodeJson(req: TemplateSmsRequest): string {
  const body: Record<string, unknown> = {
    to: req.to.join(','),
    appId: req.appId,
    templateId: req.templateId,
  };
  if (req.datas.length > 0) body.datas = [...req.datas];
  if (req.reqId) body.reqId = req.reqId;
  return JSON.stringify(body);
}

// A raw CR would reach the server as LF (XML parsers normalise line ends), so it goes as &#13;:
// a value's line breaks arrive exactly as the CSV had them.
const XML_ESCAPES: Record<string, string> = {
  '&': '&amp;',
  '<': '&lt;',
  '>': '&gt;',
  '"': '&quot;',
  "'": '&apos;',
  '\r': '&#13;',
};

export function escapeXml(text: string): string {
  return text.replace(/[&<>"'\r]/g, (c) => XML_ESCAPES[c] ?? c);
}

/**
 * True when `text` holds a character XML 1.0 cannot carry at all (most C0 controls, lone
 * surrogates, U+FFFE/U+FFFF). Such a value cannot be sent in an XML body: no escape exists.
 */
export function hasXmlInvalidChar(text: string): boolean {
  // eslint-disable-next-line no-control-regex -- control characters are what it looks for
  return /[\u0000-\u0008\u000B\u000C\u000E-\u001F\uFFFE\uFFFF]|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/.test(
    text,
  );
}

function element(name: string, value: string): string {
  return `<${name}>${escapeXml(value)}</${name}>`;
}

function encodeXml(req: TemplateSmsRequest): string {
  const parts = [
    '<?xml version="1.0" encoding="UTF-8"?>',
    '<TemplateSMS>',
    element('to', req.to.join(',')),
    element('appId', req.appId),
    element('templateId', req.templateId),
  ];
  if (req.datas.length > 0)
    parts.push(`<datas>${req.datas.map((d) => element('data', d)).join('')}</datas>`);
  if (req.reqId) parts.push(element('reqId', req.reqId));
  parts.push('</TemplateSMS>');
  return parts.join('');
}
