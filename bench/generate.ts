// The benchmark's input: a realistic CSV of N rows, the same bytes for the same (rows, seed).
//
// The mix, and why: a bulk sender's list is mostly a few campaigns (the same template and values
// to many numbers) plus a tail of personalised rows (an order number or a name per row), with a
// little dirt from spreadsheets. Here:
//   ~97.0%  five large groups over three templates (two with 2 values, one with none): they
//           become full requests of 200 numbers, so few requests carry most rows;
//   ~2.0%   personalised rows, values unique to the row: one group, hence one request, each, so
//           they make most of the requests although they are few rows;
//   ~0.5%   invalid phone cells of the kinds spreadsheets produce (digit dropped, 1.38E+10,
//           landline, letter O for zero, empty, an international number with it switched off);
//   ~0.5%   duplicates: an exact copy of a recent valid row (same number, same group).
// 1% of the valid numbers are written with spaces (138 0013 8000), as people type them.
// `--personalised SHARE` changes the share of personalised rows (the large groups take the rest),
// to see how the figures depend on the number of requests per row.
// The header is Chinese (手机号,模板ID,参数1,参数2), like the bundled sample; no extra columns.
import { seededRandom } from '../src/simulator/faults.js';
import { once } from 'node:events';
import { createWriteStream } from 'node:fs';

export const MIX = { invalid: 0.005, duplicate: 0.005, personalised: 0.02 } as const;

/** The large groups: templateId, values, and their share of all rows (they add up to 0.97). */
export const LARGE_GROUPS: ReadonlyArray<{ templateId: string; datas: string[]; share: number }> = [
  { templateId: '1', datas: ['双十一大促', '8折'], share: 0.3 },
  { templateId: '1', datas: ['会员日', '满200减30'], share: 0.2 },
  { templateId: '2', datas: ['您的快递', '已到驿站'], share: 0.15 },
  { templateId: '2', datas: ['账户', '即将到期'], share: 0.12 },
  { templateId: '3', datas: [], share: 0.2 },
];
export const PERSONALISED_TEMPLATE = '2';
export const HEADER = '手机号,模板ID,参数1,参数2';

/** Templates the simulator must know (id:variables), matching the groups above. */
export const SIMULATOR_TEMPLATES = '1:2,2:2,3:0';

const INVALID_PHONES = [
  '1380013800',
  '1.38001E+10',
  '021-62345678',
  '138OO138000',
  '',
  '+1 415 555 0100',
];
/** Numbers per request (the provider's most), as smsdrop plans them by default. */
export const MAX_PER_REQUEST = 200;
const RECENT = 4096;
const FLUSH_ROWS = 10_000;

export interface CsvMix {
  rows: number;
  seed: number;
  /** Share of personalised rows asked for. */
  personalisedShare: number;
  bytes: number;
  /** Valid, non-duplicate rows per large group, in LARGE_GROUPS order. */
  largeGroupRows: number[];
  personalisedRows: number;
  invalidRows: number;
  duplicateRows: number;
  /** Rows the provider should accept: every row that is neither invalid nor a duplicate. */
  expectedAccepted: number;
  /** Requests smsdrop should make at 200 numbers per request and no failures. */
  expectedRequests: number;
}

/** Small, fast, seedable PRNG (the simulator's mulberry32): the same seed gives the same file. */
export const createRandom = seededRandom;

/**
 * The k-th distinct mainland mobile number: 1[3-9] then 9 digits, a bijection of k / 7 onto 0 to
 * 999,999,999 (scrambleBelow), so numbers never repeat by accident and come in no order at all,
 * as in a list exported by customer or by date. (An earlier version stepped by 48,271: its
 * numbers rose in runs of ~20,000, which spared the journal's (group, number) index the random
 * inserts a real list causes; see docs/benchmark-history.md.)
 */
export function phoneAt(k: number): string {
  const second = 3 + (k % 7);
  return `1${second}${String(scrambleBelow(Math.floor(k / 7), 1_000_000_000)).padStart(9, '0')}`;
}

const MASK_30 = (1 << 30) - 1;

/** A fixed permutation of 0 .. 2^30 - 1 (odd multipliers and xor-shifts are each invertible). */
function scramble30(x: number): number {
  x = Math.imul(x, 0x2c1b3c6d) & MASK_30;
  x ^= x >>> 15;
  x = Math.imul(x, 0x297a2d39) & MASK_30;
  return (x ^ (x >>> 13)) >>> 0;
}

/**
 * A permutation of 0 .. n - 1 (n <= 2^30): scramble30, applied again while it lands at n or above
 * (cycle walking).
 */
export function scrambleBelow(i: number, n: number): number {
  let x = scramble30(i);
  while (x >= n) x = scramble30(x);
  return x;
}

function spaced(phone: string): string {
  return `${phone.slice(0, 3)} ${phone.slice(3, 7)} ${phone.slice(7)}`;
}

function csvLine(phone: string, templateId: string, datas: readonly string[]): string {
  return `${phone},${templateId},${datas[0] ?? ''},${datas[1] ?? ''}`;
}

/** Picks a large group by share. */
function largeGroupIndex(r: number): number {
  let acc = 0;
  const total = LARGE_GROUPS.reduce((s, g) => s + g.share, 0);
  for (let i = 0; i < LARGE_GROUPS.length; i++) {
    acc += LARGE_GROUPS[i]!.share / total;
    if (r < acc) return i;
  }
  return LARGE_GROUPS.length - 1;
}

interface State {
  random: () => number;
  /** Share of personalised rows (MIX.personalised unless the run asks otherwise). */
  personalised: number;
  nextPhone: number;
  /** Added to each personalised row's order number (a part of a larger list, see generateCsv). */
  firstOrder: number;
  recent: string[];
  mix: CsvMix;
}

/** One data row of the file, updating the counts. */
function nextRow(s: State): string {
  const r = s.random();
  const m = s.mix;
  if (r < MIX.invalid) {
    m.invalidRows++;
    const phone = INVALID_PHONES[Math.floor(s.random() * INVALID_PHONES.length)]!;
    return csvLine(phone, LARGE_GROUPS[0]!.templateId, LARGE_GROUPS[0]!.datas);
  }
  if (r < MIX.invalid + MIX.duplicate && s.recent.length > 0) {
    m.duplicateRows++;
    return s.recent[Math.floor(s.random() * s.recent.length)]!;
  }
  const number = phoneAt(s.nextPhone++);
  const phone = s.random() < 0.01 ? spaced(number) : number;
  let line: string;
  if (r < MIX.invalid + MIX.duplicate + s.personalised) {
    const k = s.firstOrder + m.personalisedRows++;
    line = csvLine(phone, PERSONALISED_TEMPLATE, [
      `订单${String(100_000_000 + k)}`,
      `${(((k * 7919) % 99_900) + 100) / 100}元`,
    ]);
  } else {
    const g = largeGroupIndex(s.random());
    m.largeGroupRows[g]!++;
    line = csvLine(phone, LARGE_GROUPS[g]!.templateId, LARGE_GROUPS[g]!.datas);
  }
  if (s.recent.length < RECENT) s.recent.push(line);
  else s.recent[Math.floor(s.random() * RECENT)] = line;
  return line;
}

/**
 * Writes the CSV (UTF-8, LF) to file, streaming, and returns what it holds. `first` starts its
 * numbers and order numbers further on: files made with first 0, rows, 2 * rows... share no
 * number and no personalised values (one list split among several servers).
 */
export async function generateCsv(
  file: string,
  rows: number,
  seed = 1,
  personalised: number = MIX.personalised,
  first = 0,
): Promise<CsvMix> {
  if (!(personalised >= 0 && personalised <= 1 - MIX.invalid - MIX.duplicate))
    throw new Error(`personalised share must be from 0 to 0.99, got ${personalised}`);
  const mix: CsvMix = {
    rows,
    seed,
    personalisedShare: personalised,
    bytes: 0,
    largeGroupRows: LARGE_GROUPS.map(() => 0),
    personalisedRows: 0,
    invalidRows: 0,
    duplicateRows: 0,
    expectedAccepted: 0,
    expectedRequests: 0,
  };
  const state: State = {
    random: createRandom(seed),
    personalised,
    nextPhone: first,
    firstOrder: first,
    recent: [],
    mix,
  };
  const out = createWriteStream(file);
  const write = async (text: string) => {
    mix.bytes += Buffer.byteLength(text);
    if (!out.write(text)) await once(out, 'drain');
  };
  await write(`${HEADER}\n`);
  let lines: string[] = [];
  for (let i = 0; i < rows; i++) {
    lines.push(nextRow(state));
    if (lines.length === FLUSH_ROWS) {
      await write(`${lines.join('\n')}\n`);
      lines = [];
    }
  }
  if (lines.length > 0) await write(`${lines.join('\n')}\n`);
  out.end();
  await once(out, 'finish');
  mix.expectedAccepted = rows - mix.invalidRows - mix.duplicateRows;
  mix.expectedRequests =
    mix.personalisedRows +
    mix.largeGroupRows.reduce((s, n) => s + Math.ceil(n / MAX_PER_REQUEST), 0);
  return mix;
}
