// Header and body checks: which formats the request may use, Content-Length, and the body's shape
// in JSON or XML. As lenient as the real service where the official SDKs show it accepts a form
// (bare `application/json`, a trailing `;`, `Accept: application/json;charset=UTF-8`), and strict
// where it is: a missing or wrong Accept is 112610, Content-Type 112611, Content-Length 112612 (a
// length counted in characters, not bytes, cuts the body short), a chunked body 112609. A body
// that does not parse, or whose shape is not the spec's, is 160031 ("body unparseable"); an
// empty body is 160030 ("body empty").
import type { IncomingHttpHeaders } from 'node:http';
import { XMLParser, XMLValidator } from 'fast-xml-parser';
import type { WireFormat } from './reply.js';

/** A request body that has the right shape; its values are not judged yet. */
export interface Submission {
  to: string;
  appId: string;
  templateId: string;
  datas: string[];
  reqId?: string;
  subAppend?: string;
}

export type Decoded = { ok: true; submission: Submission } | { ok: false; code: string };

// The type, then optionally a UTF-8 charset, then optionally a trailing ";" (the doc sample's
// form).
const ACCEPT = /^\s*application\/(json|xml)\s*(?:;\s*charset\s*=\s*utf-8\s*)?;?\s*$/i;
const CONTENT_TYPE = ACCEPT;
// XML 1.0, UTF-8, optional standalone; nothing (not even a BOM or a blank) before it.
const XML_PROLOG =
  /^<\?xml\s+version\s*=\s*(["'])1\.0\1\s+encoding\s*=\s*(["'])utf-8\2(\s+standalone\s*=\s*(["'])(yes|no)\4)?\s*\?>/i;
// Unknown members are refused rather than ignored: a misspelt `reqid` would otherwise silently
// drop the duplicate protection, and the sender would never find out.
const MEMBERS = new Set(['to', 'appId', 'templateId', 'datas', 'reqId', 'subAppend']);
const TYPE_PREFIX = /^\s*application\/(json|xml)/i;
const DIGITS = /^\d+$/;
// Stateless between calls (no `stream`), so one decoder serves every request.
const strictUtf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

/** The response format the Accept header asks for, or undefined when it is not allowed. */
export function acceptedFormat(accept: string | undefined): WireFormat | undefined {
  const m = ACCEPT.exec(accept ?? '');
  return m ? (m[1]!.toLowerCase() as WireFormat) : undefined;
}

function bodyFormat(contentType: string | undefined): WireFormat | undefined {
  const m = CONTENT_TYPE.exec(contentType ?? '');
  return m ? (m[1]!.toLowerCase() as WireFormat) : undefined;
}

/** The format to answer in: Accept when allowed, else that of Content-Type, else JSON. */
export function replyFormat(headers: IncomingHttpHeaders): WireFormat {
  const fromType = TYPE_PREFIX.exec(headers['content-type'] ?? '')?.[1];
  return (
    acceptedFormat(headers.accept) ?? (fromType?.toLowerCase() as WireFormat | undefined) ?? 'json'
  );
}

const bad = (code = '160031'): Decoded => ({ ok: false, code });

/**
 * Checks headers, framing and shape, in that order. `overrun`: bytes followed the body that
 * Content-Length framed (a length counted in characters, not bytes), so the length was wrong.
 */
export function decodeSubmission(
  headers: IncomingHttpHeaders,
  body: Buffer,
  overrun = false,
): Decoded {
  const format = bodyFormat(headers['content-type']);
  if (!acceptedFormat(headers.accept)) return bad('112610');
  if (!format) return bad('112611');
  if (/chunked/i.test(headers['transfer-encoding'] ?? '')) return bad('112609');
  const declared = headers['content-length'];
  if (
    overrun ||
    declared === undefined ||
    !DIGITS.test(declared) ||
    Number(declared) !== body.length
  )
    return bad('112612');
  if (body.length === 0) return bad('160030');
  let text: string;
  try {
    text = strictUtf8.decode(body);
  } catch {
    return bad();
  }
  const submission = format === 'json' ? fromJson(text) : fromXml(text);
  return submission ? { ok: true, submission } : bad();
}

const isString = (v: unknown): v is string => typeof v === 'string';

/** The shared shape rule: known members only, three required strings, optional strings. */
function shaped(
  members: Record<string, unknown>,
  datas: string[] | undefined,
): Submission | undefined {
  if (Object.keys(members).some((k) => !MEMBERS.has(k))) return undefined;
  const { to, appId, templateId, reqId, subAppend } = members;
  if (!isString(to) || !isString(appId) || !isString(templateId) || !datas) return undefined;
  if (
    (reqId !== undefined && !isString(reqId)) ||
    (subAppend !== undefined && !isString(subAppend))
  )
    return undefined;
  const out: Submission = { to, appId, templateId, datas };
  if (reqId !== undefined) out.reqId = reqId;
  if (subAppend !== undefined) out.subAppend = subAppend;
  return out;
}

function fromJson(text: string): Submission | undefined {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return undefined;
  }
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) return undefined;
  const members = parsed as Record<string, unknown>;
  const datas = members.datas === undefined ? [] : members.datas;
  const list = Array.isArray(datas) && datas.every(isString) ? datas : undefined;
  return shaped(members, list);
}

// Strings only, and values exactly as sent: template data may begin or end with spaces.
// htmlEntities makes the parser decode character references (&#13; &#x1F600;) as XML requires;
// without it they would stay as text.
const xmlParser = new XMLParser({
  htmlEntities: true,
  ignoreAttributes: true,
  ignoreDeclaration: true,
  parseTagValue: false,
  trimValues: false,
  isArray: (_name, jpath) => jpath === 'TemplateSMS.datas.data',
});

const isBlank = (v: unknown) => isString(v) && v.trim() === '';

/**
 * Drops the whitespace between elements, which the parser keeps as `#text` once trimming is off.
 */
function elements(node: unknown): Record<string, unknown> | undefined {
  if (node === null || typeof node !== 'object' || Array.isArray(node)) return undefined;
  const { '#text': between, ...rest } = node as Record<string, unknown>;
  return between === undefined || isBlank(between) ? rest : undefined;
}

function xmlDatas(node: unknown): string[] | undefined {
  if (node === undefined || isBlank(node)) return [];
  const children = elements(node);
  if (!children || Object.keys(children).some((k) => k !== 'data')) return undefined;
  const data = children.data ?? [];
  return Array.isArray(data) && data.every(isString) ? data : undefined;
}

function fromXml(text: string): Submission | undefined {
  if (!XML_PROLOG.test(text) || XMLValidator.validate(text) !== true) return undefined;
  let doc: unknown;
  try {
    doc = xmlParser.parse(text);
  } catch {
    return undefined;
  }
  const top = elements(doc);
  if (!top || Object.keys(top).length !== 1) return undefined;
  const root = elements(top.TemplateSMS);
  if (!root) return undefined;
  const { datas, ...members } = root;
  return shaped(members, xmlDatas(datas));
}
