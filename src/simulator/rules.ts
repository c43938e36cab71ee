// The business checks on a well-formed request, in the provider's order: app, template, variables,
// numbers, reqId, blacklist. Pure apart from the reqId memory, which only accepted requests update.
import type { Submission } from './wire.js';

export const MAX_NUMBERS = 200;
const REQ_ID_MAX = 32;
// Mainland mobile, or international written 00 + country code + number.
const VALID_NUMBER = /^(?:1[3-9]\d{9}|00\d{6,15})$/;

export interface Catalogue {
  appIds: ReadonlySet<string>;
  /** templateId -> variable count. */
  templates: ReadonlyMap<string, number>;
  blocked: ReadonlySet<string>;
}

/** reqIds accepted, with the natural day (yyyyMMdd in the simulator's zone) they were accepted on. */
export class ReqIdMemory {
  #dayOf = new Map<string, string>();

  has(reqId: string, day: string): boolean {
    return this.#dayOf.get(reqId) === day;
  }

  remember(reqId: string, day: string): void {
    this.#dayOf.set(reqId, day);
  }
}

export type Judgement = { ok: true; numbers: string[] } | { ok: false; code: string };

/** The first failing status code, or the split recipient list when the request may be accepted. */
export function judgeSubmission(s: Submission, catalogue: Catalogue, memory: ReqIdMemory, today: string): Judgement {
  const fail = (code: string): Judgement => ({ ok: false, code });
  if (!catalogue.appIds.has(s.appId)) return fail('111181');
  const variables = catalogue.templates.get(s.templateId);
  if (variables === undefined) return fail('112311');
  if (s.datas.length !== variables) return fail('160052');
  if (s.to === '') return fail('112306');
  const numbers = s.to.split(',');
  if (numbers.length > MAX_NUMBERS) return fail('160048');
  if (!numbers.every((n) => VALID_NUMBER.test(n))) return fail('160042');
  if (new Set(numbers).size !== numbers.length) return fail('160045');
  if (s.reqId !== undefined && s.reqId.length > REQ_ID_MAX) return fail('160055');
  if (s.reqId && memory.has(s.reqId, today)) return fail('160054');
  if (numbers.some((n) => catalogue.blocked.has(n))) return fail('160034');
  return { ok: true, numbers };
}
