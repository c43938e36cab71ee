// Response bodies, JSON or XML, into a status code and the success fields. The format is sniffed
// from the first non-space character (Accept only asks for one). statusCode stays a string:
// "000000" is success and nothing else is; statusMsg is carried, never interpreted. Anything we
// cannot read with certainty is "malformed": the caller must then treat the batch as in doubt.
import { createRequire } from 'node:module';
import type { XMLParser } from 'fast-xml-parser';
import type { BodyFormat } from './types.js';

export interface DecodedResponse {
  statusCode: string;
  smsMessageSid?: string;
  dateCreated?: string;
  statusMsg?: string;
}

export interface MalformedResponse {
  malformed: true;
  /** Why the body could not be read; contains no body text. */
  why: string;
}

export type DecodeResult = DecodedResponse | MalformedResponse;

export function isMalformed(r: DecodeResult): r is MalformedResponse {
  return 'malformed' in r;
}

const malformed = (why: string): MalformedResponse => ({ malformed: true, why });

/** Decodes a 200 answer. `expected` is the format asked for; the body's own shape decides. */
export function decodeResponse(body: string, expected: BodyFormat): DecodeResult {
  const format = sniffFormat(body) ?? expected;
  let fields: Record<string, unknown> | MalformedResponse;
  try {
    fields = format === 'json' ? jsonFields(body) : xmlFields(body);
  } catch (err) {
    return malformed(`${format.toUpperCase()} body does not parse (${(err as Error).name})`);
  }
  return isMalformedValue(fields) ? fields : checkFields(fields, format);
}

function isMalformedValue(v: unknown): v is MalformedResponse {
  return typeof v === 'object' && v !== null && 'malformed' in v;
}

function sniffFormat(body: string): BodyFormat | undefined {
  // the common case, without copying the body: it starts with the brace or the angle bracket
  const first = body.charCodeAt(0) === 0x7b ? '{' : body.replace(/^\uFEFF/, '').trimStart()[0];
  if (first === '{') return 'json';
  if (first === '<') return 'xml';
  return undefined;
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function jsonFields(body: string): Record<string, unknown> | MalformedResponse {
  const parsed: unknown = JSON.parse(body.charCodeAt(0) === 0xfeff ? body.slice(1) : body);
  if (!isRecord(parsed)) return malformed('JSON body is not an object');
  // the fields checkFields reads, not a copy of all
  return {
    statusCode: parsed.statusCode,
    statusMsg: parsed.statusMsg,
    success: parsed.templateSMS,
  };
}

// fast-xml-parser is loaded on the first XML answer: a JSON-only run never carries it (10 MB).
let xml: { parser: XMLParser; validate: (body: string) => true | object } | undefined;
function xmlTools(): NonNullable<typeof xml> {
  if (!xml) {
    const lib = createRequire(import.meta.url)(
      'fast-xml-parser',
    ) as typeof import('fast-xml-parser');
    const parser = new lib.XMLParser({
      parseTagValue: false, // "000000" must stay a string
      ignoreAttributes: true,
      ignoreDeclaration: true,
      htmlEntities: true, // numeric character references in statusMsg
    });
    xml = { parser, validate: (body) => lib.XMLValidator.validate(body) };
  }
  return xml;
}

function xmlFields(body: string): Record<string, unknown> | MalformedResponse {
  const { parser, validate } = xmlTools();
  if (validate(body) !== true) return malformed('XML body is not well-formed');
  const doc: unknown = parser.parse(body);
  if (!isRecord(doc)) return malformed('XML body has no root element');
  const roots = Object.keys(doc);
  if (roots.length !== 1 || roots[0] !== 'Response' || !isRecord(doc.Response)) {
    return malformed('XML root element is not a single <Response>');
  }
  return { ...doc.Response, success: doc.Response.TemplateSMS };
}

function optionalString(v: unknown): string | undefined | null {
  if (v === undefined) return undefined;
  return typeof v === 'string' ? v : null;
}

// `success` is the format's success child (JSON templateSMS, XML TemplateSMS).
function checkFields(f: Record<string, unknown>, format: BodyFormat): DecodeResult {
  const child = format === 'json' ? 'templateSMS' : 'TemplateSMS';
  if (typeof f.statusCode !== 'string' || f.statusCode === '')
    return malformed('statusCode missing or not a string');
  // statusMsg is only ever shown: one that is not text (null, a number) leaves a clear code clear.
  const statusMsg = optionalString(f.statusMsg);
  const out: DecodedResponse = { statusCode: f.statusCode };
  if (typeof statusMsg === 'string') out.statusMsg = statusMsg;
  if (f.statusCode !== '000000') return out;
  if (!isRecord(f.success)) return malformed(`statusCode 000000 without a ${child} object`);
  const sid = optionalString(f.success.smsMessageSid);
  const created = optionalString(f.success.dateCreated);
  if (!sid) return malformed('statusCode 000000 without smsMessageSid');
  if (created === null) return malformed('dateCreated is not a string');
  out.smsMessageSid = sid;
  if (created !== undefined) out.dateCreated = created;
  return out;
}
