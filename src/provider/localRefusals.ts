// Local refusals: requests the provider would refuse anyway are answered by the client with the
// code the provider would use (and its class), so they never cost a request or an ambiguous
// outcome. The reqId length (160055) and number formats (160042) are left to the provider, which
// owns those rules.
import { hasXmlInvalidChar } from './encode.js';
import type { BodyFormat, TemplateSmsRequest } from './types.js';

export interface Refusal {
  statusCode: string;
  statusMsg: string;
}

/** The provider's answer to a request it would refuse, or undefined to send it. */
export function refuseLocally(
  req: TemplateSmsRequest,
  maxPerRequest: number,
  format: BodyFormat,
): Refusal | undefined {
  const r = (statusCode: string, statusMsg: string): Refusal => ({ statusCode, statusMsg });
  if (!Array.isArray(req.to) || req.to.length === 0) return r('112306', 'no recipient numbers');
  if (req.to.length > maxPerRequest)
    return r('160048', `${req.to.length} numbers, more than ${maxPerRequest} per request`);
  const problem = numbersProblem(req.to);
  if (problem === 'bad') return r('160042', 'a recipient number is empty or contains a comma');
  if (problem === 'duplicate') return r('160045', 'duplicate numbers in one request');
  if (typeof req.appId !== 'string' || req.appId === '') return r('111181', 'appId missing');
  if (typeof req.templateId !== 'string' || req.templateId === '')
    return r('112307', 'templateId missing');
  if (!Array.isArray(req.datas) || req.datas.some((d) => typeof d !== 'string')) {
    return r('160052', 'template data must be a list of strings');
  }
  if (
    format === 'xml' &&
    [...req.to, req.appId, req.templateId, req.reqId ?? '', ...req.datas].some(hasXmlInvalidChar)
  ) {
    return r('160031', 'a value holds a character XML cannot carry (control character)');
  }
  return undefined;
}

/**
 * 'bad' when a number is not text, is blank or holds a comma; else 'duplicate' when one repeats;
 * else undefined. One pass: it runs on every request, over up to 200 numbers.
 */
function numbersProblem(to: readonly unknown[]): 'bad' | 'duplicate' | undefined {
  const seen = new Set<string>();
  let duplicate = false;
  for (let i = 0; i < to.length; i++) {
    const n = to[i];
    if (typeof n !== 'string' || n.includes(',') || n.trim() === '') return 'bad';
    if (!duplicate) duplicate = seen.size === seen.add(n).size;
  }
  return duplicate ? 'duplicate' : undefined;
}
