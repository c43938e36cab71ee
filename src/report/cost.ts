// What sending costs in money: billable SMS segments times SMSDROP_PRICE_PER_SEGMENT, shown in
// SMSDROP_CURRENCY. Every place that shows a cost (the dry run, `report FILE`, a file's preview
// before it is sent) asks costOf, so they cannot disagree. Reckoned in decimal: the price is
// written in decimal, and 0.045 × 3 is 0.135, not binary floating point's 0.13499999999999998.
import { render, segmentsOf, type TemplateBook } from '../config/templates.js';
import type { ExportReads } from '../ports/index.js';
import { ROW_STATUS } from '../ports/states.js';

/** The settings a cost is made of. */
export interface Pricing {
  /** Decimal text, as the setting validated it (0.045). */
  pricePerSegment?: string | undefined;
  currency?: string | undefined;
}

export interface Cost {
  /** Decimal text, exact, without trailing zeros after the point (0.18, 5555.565, 12). */
  amount: string;
  /** null: none set; the amount is a plain number. */
  currency: string | null;
  pricePerSegment: string;
  segments: number;
  /**
   * true: `segments` is a floor, one per number, where the messages' own were not counted (no
   * templates file, or a template it does not hold).
   */
  atLeast: boolean;
}

/** What `segments` billable segments cost, or undefined when no price is set. */
export function costOf(segments: number, pricing: Pricing, atLeast = false): Cost | undefined {
  const price = pricing.pricePerSegment;
  if (price === undefined) return undefined;
  const [whole, fraction = ''] = price.split('.');
  const units = BigInt(`${whole}${fraction}`) * BigInt(segments);
  return {
    amount: decimalText(units, fraction.length),
    currency: pricing.currency ?? null,
    pricePerSegment: price,
    segments,
    atLeast,
  };
}

/**
 * What a planned file will cost (the dry run, a file held for approval): its billable segments
 * when the templates file counted them (messages.ts, billableSegments), else one per number to
 * send, at least.
 */
export function planCost(
  plan: { numbers: number },
  billableSegments: number | undefined,
  pricing: Pricing,
): Cost | undefined {
  return billableSegments === undefined
    ? costOf(plan.numbers, pricing, true)
    : costOf(billableSegments, pricing);
}

/** `units` hundredths (scale 2), thousandths (3)… as decimal text, trailing zeros dropped. */
function decimalText(units: bigint, scale: number): string {
  const digits = units.toString().padStart(scale + 1, '0');
  const whole = digits.slice(0, digits.length - scale);
  const fraction = digits.slice(digits.length - scale).replace(/0+$/, '');
  return fraction === '' ? whole : `${whole}.${fraction}`;
}

/** The amount as people read it: "0.18 CNY", "at least 12 元", "0.18". */
export function costText(cost: Cost): string {
  const amount = cost.currency === null ? cost.amount : `${cost.amount} ${cost.currency}`;
  return cost.atLeast ? `at least ${amount}` : amount;
}

/** The cost with what it is made of, for a summary: `what` names the segments' messages. */
export function costLine(cost: Cost, what: string): string {
  const made = `${cost.segments} ${cost.atLeast ? '' : 'billable '}segment(s) × ${cost.pricePerSegment}`;
  const floor = cost.atLeast
    ? ", one per number: each message's own count needs the templates file (SMSDROP_TEMPLATES_FILE)"
    : '';
  return `cost       ${costText(cost)} for ${what}: ${made}${floor}`;
}

/**
 * The segments of the messages the provider accepted for a file: each accepted row's message as
 * the templates file renders it. Undefined (count one per number instead) without a templates
 * file; `atLeast` when a row's template is not in it.
 */
export async function acceptedSegments(
  reads: Pick<ExportReads, 'recipients'>,
  fileId: number,
  templates: TemplateBook | undefined,
): Promise<{ segments: number; atLeast: boolean } | undefined> {
  if (!templates) return undefined;
  const known = new Map<string, number>();
  let segments = 0;
  let atLeast = false;
  for await (const page of reads.recipients(fileId, [ROW_STATUS.accepted]))
    for (const row of page) {
      const template = row.template_id === null ? undefined : templates.byId.get(row.template_id);
      if (!template) {
        atLeast = true;
        segments += 1;
        continue;
      }
      const key = `${row.template_id}\u0000${row.datas ?? '[]'}`;
      let count = known.get(key);
      if (count === undefined) {
        count = segmentsOf(render(template, JSON.parse(row.datas ?? '[]') as string[]));
        known.set(key, count);
      }
      segments += count;
    }
  return { segments, atLeast };
}
