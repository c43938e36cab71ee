// The business checks on a well-formed request, in the provider's order: app, template, variables,
// numbers (an international one only alone: 160059), reqId, blacklist. Pure apart from the reqId
// memory, which only accepted requests update.
import type { Submission } from './wire.js';

/** The spec's limit of numbers per request (the simulator's default). */
export const MAX_NUMBERS = 200;
const REQ_ID_MAX = 32;
// Mainland mobile, or international written 00 + country code + number.
const NUMBER = String.raw`(?:1[3-9]\d{9}|00\d{6,15})`;
// The whole comma-separated list in one match: for 200 numbers, far cheaper than 200 matches.
const VALID_LIST = new RegExp(`^(?:${NUMBER},)*${NUMBER}$`);

export interface Catalogue {
  appIds: ReadonlySet<string>;
  /** templateId -> variable count. */
  templates: ReadonlyMap<string, number>;
  blocked: ReadonlySet<string>;
  /** Numbers over their daily cap (160040). */
  capped: ReadonlySet<string>;
  /** Numbers per request at most (160048 above). */
  maxNumbers: number;
  /** Numbers answered with a chosen status code. */
  numberCodes: ReadonlyMap<string, string>;
}

/**
 * reqIds accepted, with the natural day (yyyyMMdd in the simulator's zone) they were accepted on.
 */
export class ReqIdMemory {
  #dayOf = new Map<string, string>();

  has(reqId: string, day: string): boolean {
    return this.#dayOf.get(reqId) === day;
  }

  remember(reqId: string, day: string): void {
    this.#dayOf.set(reqId, day);
  }
}

function hasDuplicate(items: string[]): boolean {
  const seen = new Set<string>();
  for (const item of items) {
    if (seen.has(item)) return true;
    seen.add(item);
  }
  return false;
}

export type Judgement = { ok: true; numbers: string[] } | { ok: false; code: string };

/** The first failing status code, or the split recipient list when the request may be accepted. */
export function judgeSubmission(
  s: Submission,
  catalogue: Catalogue,
  memory: ReqIdMemory,
  today: string,
): Judgement {
  const fail = (code: string): Judgement => ({ ok: false, code });
  if (!catalogue.appIds.has(s.appId)) return fail('111181');
  const variables = catalogue.templates.get(s.templateId);
  if (variables === undefined) return fail('112311');
  if (s.datas.length !== variables) return fail('160052');
  if (s.to === '') return fail('112306');
  const numbers = s.to.split(',');
  if (numbers.length > catalogue.maxNumbers) return fail('160048');
  if (!VALID_LIST.test(s.to)) return fail('160042');
  if (hasDuplicate(numbers)) return fail('160045');
  if (numbers.length > 1 && numbers.some((n) => n.startsWith('00'))) return fail('160059'); // international messages cannot go in bulk
  if (s.reqId !== undefined && s.reqId.length > REQ_ID_MAX) return fail('160055');
  if (s.reqId && memory.has(s.reqId, today)) return fail('160054');
  if (catalogue.blocked.size > 0 && numbers.some((n) => catalogue.blocked.has(n)))
    return fail('160034');
  if (catalogue.capped.size > 0 && numbers.some((n) => catalogue.capped.has(n)))
    return fail('160040');
  if (catalogue.numberCodes.size > 0) {
    const chosen = numbers.find((n) => catalogue.numberCodes.has(n));
    if (chosen !== undefined) return fail(catalogue.numberCodes.get(chosen)!);
  }
  return { ok: true, numbers };
}
