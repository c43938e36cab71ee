// Fault injection: the CLI syntax, validation of programmatic rules, and the per-request choice.
// Probabilities come from a seeded PRNG so a failing run can be replayed with the same --seed.
import type { FaultKind, FaultRule } from './types.js';

const CLI_KINDS: Record<string, FaultKind> = {
  http500: 'http500',
  status: 'status',
  'cut-before': 'cut-before-accept',
  'cut-after': 'cut-after-accept',
  stall: 'stall',
  // The long names are accepted too, so a rule printed from FaultRule.kind parses back.
  'cut-before-accept': 'cut-before-accept',
  'cut-after-accept': 'cut-after-accept',
};

const STATUS_CODE = /^\d{6}$/;

/**
 * Parses `KIND[=CODE]@RATE,...`: KIND http500|status|cut-before|cut-after|stall, `=CODE` only for
 * status, RATE a probability (0.1) or /N (every Nth request). Empty spec: no faults.
 */
export function parseFaults(spec: string): FaultRule[] {
  const items = spec.split(',').map((s) => s.trim());
  if (items.length === 1 && items[0] === '') return [];
  return items.map(parseRule);
}

function parseRule(item: string): FaultRule {
  const fail = (why: string): never => {
    throw new Error(
      `bad fault rule "${item}": ${why} (expected KIND[=CODE]@RATE, e.g. http500@0.05 or status=160000@/7)`,
    );
  };
  const m = /^([a-z0-9-]+)(?:=([^@]*))?@(.*)$/.exec(item);
  if (!m) return fail('missing @RATE or bad syntax');
  const [, name = '', code, rate = ''] = m;
  const kind = CLI_KINDS[name];
  if (!kind)
    return fail(
      `unknown kind "${name}", expected one of http500, status, cut-before, cut-after, stall`,
    );
  const rule: FaultRule = { kind, ...parseRate(rate, fail) };
  if (kind === 'status') {
    if (code === undefined || !STATUS_CODE.test(code))
      return fail('status needs =CODE, a 6-digit status code');
    rule.statusCode = code;
  } else if (code !== undefined) {
    return fail('=CODE is only allowed with status');
  }
  return rule;
}

function parseRate(
  rate: string,
  fail: (why: string) => never,
): Pick<FaultRule, 'probability' | 'everyNth'> {
  if (rate.startsWith('/')) {
    const n = Number(rate.slice(1));
    if (!/^\/\d+$/.test(rate) || !Number.isSafeInteger(n) || n < 1)
      return fail('/N needs a whole number N >= 1');
    return { everyNth: n };
  }
  const p = Number(rate);
  if (!/^(0|1)?(\.\d+)?$/.test(rate) || rate === '' || !(p > 0 && p <= 1))
    return fail('a probability must be above 0 and at most 1');
  return { probability: p };
}

/** Checks rules given in code; throws one message naming the bad rule. */
export function validateFaults(rules: FaultRule[]): void {
  rules.forEach((r, i) => {
    const where = `faults[${i}] (${JSON.stringify(r)})`;
    if (!Object.values(CLI_KINDS).includes(r.kind)) throw new Error(`${where}: unknown kind`);
    const hasP = r.probability !== undefined;
    const hasN = r.everyNth !== undefined;
    if (hasP === hasN)
      throw new Error(`${where}: expected exactly one of probability and everyNth`);
    if (hasP && !(r.probability! > 0 && r.probability! <= 1))
      throw new Error(`${where}: probability must be above 0 and at most 1`);
    if (hasN && !(Number.isSafeInteger(r.everyNth) && r.everyNth! >= 1))
      throw new Error(`${where}: everyNth must be a whole number >= 1`);
    if (r.kind === 'status' && !STATUS_CODE.test(r.statusCode ?? ''))
      throw new Error(`${where}: status needs a 6-digit statusCode`);
  });
}

/** mulberry32: tiny, fast, good enough to spread faults; reproducible from a 32-bit seed. */
export function seededRandom(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/**
 * Returns the chooser: given the 1-based number of a request, the first rule that applies, if any.
 * Every probabilistic rule draws once per request, so the sequence depends only on the seed.
 */
export function createFaultChooser(
  rules: FaultRule[],
  seed: number,
): (requestNumber: number) => FaultRule | undefined {
  const random = seededRandom(seed);
  return (n) => {
    let chosen: FaultRule | undefined;
    for (const rule of rules) {
      const hit =
        rule.everyNth !== undefined ? n % rule.everyNth === 0 : random() < (rule.probability ?? 0);
      if (hit && !chosen) chosen = rule;
    }
    return chosen;
  };
}

/** Parses "1:2,2:2,3:0" (templateId:variable count) into { '1': 2, '2': 2, '3': 0 }. */
export function parseTemplates(spec: string): Record<string, number> {
  const out: Record<string, number> = {};
  for (const item of spec.split(',').map((s) => s.trim())) {
    const m = /^([^:\s]+):(\d{1,2})$/.exec(item);
    if (!m)
      throw new Error(`bad template "${item}": expected ID:VARIABLES, e.g. 1:2 (spec "${spec}")`);
    if (m[1]! in out) throw new Error(`template ${m[1]} is listed twice (spec "${spec}")`);
    out[m[1]!] = Number(m[2]);
  }
  return out;
}
