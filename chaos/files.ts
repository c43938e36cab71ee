// The chaos suite's input files: pure and seeded, the same bytes for the same (seed, round, scale).
// A round is five files of the shapes that have broken senders before, in this order:
//   groups.csv        thousands of small groups (1 to 4 numbers each) plus one group of a
//                     template without values;
//   gb18030.csv       a Chinese Excel export: GB18030, CRLF, Chinese header and values, full-width
//                     digits in some numbers;
//   repeat.csv        half of groups.csv's rows again plus new ones, as other bytes (BOM, CRLF):
//                     a list "saved again by Excel with rows added";
//   personalised.csv  one message per row (values unique to the row), quoted values with commas;
//   big.csv           one group of 20,500 numbers (8,000 at scale small) of the template without
//                     values, with duplicates inside it, numbers typed the way people type them
//                     (spaces, +86, 0086-, a leading '), and the numbers groups.csv sends that
//                     message to (repeats of another file).
// Some rows have a broken number on purpose: they must end `invalid` and never be sent.
// Alongside the bytes, each file carries what it must cause, computed from the rows alone and
// never from smsdrop's journal: the (app, template, values, normalised number) of each valid row.
import iconv from 'iconv-lite';
import { seededRandom } from '../src/simulator/faults.js';

export type Scale = 'full' | 'small';

/** Templates the simulator must know (id:variables): 1 takes two values, 2 one, 3 none. */
export const SIMULATOR_TEMPLATES = '1:2,2:1,3:0';

export interface ChaosFile {
  name: string;
  bytes: Buffer;
  /** Data rows (the header not counted). */
  rows: number;
  /** Rows with a broken number: they must end `invalid`. */
  invalid: number;
  /** messageKey of every valid row, repeats included. */
  messages: string[];
}

const SIZES: Record<
  Scale,
  {
    big: number;
    groups: number;
    gbRows: number;
    gbGroups: number;
    newInRepeat: number;
    personalised: number;
    noValues: number;
  }
> = {
  // The big file spans more than a page of the doubts' look-up (20,000 rows): the sending process
  // then looks its doubts up on the journal's thread, after a commit of its own.
  full: {
    big: 20_500,
    groups: 3_000,
    gbRows: 2_000,
    gbGroups: 20,
    newInRepeat: 100,
    personalised: 1_500,
    noValues: 40,
  },
  // The big group stays big: below ~7,000 numbers the intake's filter of numbers seen (65,536
  // bits at least) never mistakes a new number for a repeat, and that path goes untested.
  small: {
    big: 8_000,
    groups: 120,
    gbRows: 150,
    gbGroups: 5,
    newInRepeat: 15,
    personalised: 60,
    noValues: 10,
  },
};

const INVALID_PHONES = [
  '1380013800',
  '1.38001E+10',
  '021-62345678',
  '138OO138000',
  '12345678901',
  '',
];

/** What the provider records for a message to a number; the identity of a delivery. */
export function messageKey(
  appId: string,
  templateId: string,
  datas: readonly string[],
  phone: string,
): string {
  return JSON.stringify([appId, templateId, datas, phone]);
}

interface Row {
  phoneCell: string;
  templateId: string;
  datas: string[];
  /** The normalised number, or undefined for a row made invalid on purpose. */
  phone: string | undefined;
}

/** Random helpers over one seeded stream. */
class Dice {
  readonly next: () => number;
  readonly #usedPhones = new Set<string>();
  readonly #block: string;
  /** `block` (0-99) goes into every number, so rounds never share one. */
  constructor(seed: number, block: number) {
    this.next = seededRandom(seed);
    this.#block = String(block % 100).padStart(2, '0');
  }
  int(min: number, max: number): number {
    return min + Math.floor(this.next() * (max - min + 1));
  }
  pick<T>(items: readonly T[]): T {
    return items[Math.floor(this.next() * items.length)]!;
  }
  /** A mainland mobile number not handed out before by this Dice (1, 3-9, the block, 7 digits). */
  freshPhone(): string {
    for (;;) {
      const phone = `1${this.int(3, 9)}${this.#block}${String(this.int(0, 9_999_999)).padStart(7, '0')}`;
      if (!this.#usedPhones.has(phone)) {
        this.#usedPhones.add(phone);
        return phone;
      }
    }
  }
  shuffle<T>(items: T[]): T[] {
    for (let i = items.length - 1; i > 0; i--) {
      const j = Math.floor(this.next() * (i + 1));
      [items[i], items[j]] = [items[j]!, items[i]!];
    }
    return items;
  }
}

const FULL_WIDTH_DIGITS = '０１２３４５６７８９';

/** How a person or a spreadsheet may write the number; smsdrop normalises each back to `phone`. */
function typed(phone: string, dice: Dice, fullWidth = false): string {
  const r = dice.next();
  if (r < 0.85) return phone;
  if (r < 0.88) return `${phone.slice(0, 3)} ${phone.slice(3, 7)} ${phone.slice(7)}`;
  if (r < 0.91) return `+86${phone}`;
  if (r < 0.93) return `0086-${phone.slice(0, 3)}-${phone.slice(3, 7)}-${phone.slice(7)}`;
  if (r < 0.95) return `'${phone}`;
  if (r < 0.97) return `${phone}.0`;
  if (fullWidth) return [...phone].map((d) => FULL_WIDTH_DIGITS[Number(d)]).join('');
  return `86${phone}`;
}

function validRow(
  dice: Dice,
  phone: string,
  templateId: string,
  datas: string[],
  fullWidth = false,
): Row {
  return { phoneCell: typed(phone, dice, fullWidth), templateId, datas, phone };
}

function invalidRows(dice: Dice, templateId: string, datas: string[], count: number): Row[] {
  return Array.from({ length: count }, () => ({
    phoneCell: dice.pick(INVALID_PHONES),
    templateId,
    datas,
    phone: undefined,
  }));
}

function csvCell(text: string): string {
  return /[",\r\n]/.test(text) ? `"${text.replaceAll('"', '""')}"` : text;
}

interface Layout {
  header: string[];
  lineEnd: '\n' | '\r\n';
  bom?: boolean;
  encoding?: 'utf8' | 'gb18030';
  /** Value columns written (the template with the most values); fewer values leave cells empty. */
  values: number;
}

function render(rows: Row[], layout: Layout): Buffer {
  const lines = [layout.header.map(csvCell).join(',')];
  for (const row of rows) {
    const values = Array.from({ length: layout.values }, (_, i) => row.datas[i] ?? '');
    lines.push([row.phoneCell, row.templateId, ...values].map(csvCell).join(','));
  }
  const text = `${layout.bom ? '\uFEFF' : ''}${lines.join(layout.lineEnd)}${layout.lineEnd}`;
  return layout.encoding === 'gb18030' ? iconv.encode(text, 'gb18030') : Buffer.from(text, 'utf8');
}

function fileOf(name: string, rows: Row[], layout: Layout, appId: string): ChaosFile {
  const valid = rows.filter((r) => r.phone !== undefined);
  return {
    name,
    bytes: render(rows, layout),
    rows: rows.length,
    invalid: rows.length - valid.length,
    messages: valid.map((r) => messageKey(appId, r.templateId, r.datas, r.phone!)),
  };
}

const ENGLISH: Layout = {
  header: ['phone', 'template', 'data1', 'data2'],
  lineEnd: '\n',
  values: 2,
};

/**
 * One group of many numbers of template 3 (no values: short rows, so the intake's filter of
 * numbers seen is as full as it gets), ~5% of its rows a number already in it (typed another way,
 * maybe), and `shared`: numbers another file of the round sends the same message to.
 */
function bigGroup(dice: Dice, size: number, shared: string[]): Row[] {
  const rows: Row[] = shared.map((phone) => validRow(dice, phone, '3', []));
  const phones: string[] = [];
  for (let i = 0; i < size; i++) {
    const again = phones.length > 0 && dice.next() < 0.05;
    const phone = again ? dice.pick(phones) : dice.freshPhone();
    if (!again) phones.push(phone);
    rows.push(validRow(dice, phone, '3', []));
  }
  return dice.shuffle([...rows, ...invalidRows(dice, '3', [], 3)]);
}

/**
 * Many groups of 1 to 4 numbers (template 2, one value each), then a group of template 3 (no
 * values).
 */
function smallGroups(dice: Dice, groups: number, noValues: number, tag: string): Row[] {
  const rows: Row[] = [];
  for (let g = 0; g < groups; g++) {
    const datas = [`${tag} g${g}`];
    for (let n = dice.int(1, 4); n > 0; n--)
      rows.push(validRow(dice, dice.freshPhone(), '2', datas));
  }
  for (let i = 0; i < noValues; i++) rows.push(validRow(dice, dice.freshPhone(), '3', []));
  return rows;
}

const SURNAMES = ['王', '李', '张', '刘', '陈', '杨', '赵', '黄', '周', '吴'];

/** Chinese values over a few groups; full-width digits allowed in the numbers. */
function chineseGroups(dice: Dice, rows: number, groups: number, tag: string): Row[] {
  const datas = Array.from({ length: groups }, (_, g) => [
    `${SURNAMES[g % SURNAMES.length]}先生${tag}`,
    `您的订单第${g}批已发货`,
  ]);
  return Array.from({ length: rows }, () =>
    validRow(dice, dice.freshPhone(), '1', dice.pick(datas), true),
  );
}

/** Values unique to each row, some with commas and quotes, so the file has quoted cells. */
function personalisedRows(dice: Dice, rows: number, tag: string): Row[] {
  const out = Array.from({ length: rows }, (_, i) => {
    const name =
      i % 3 === 0 ? `Wang, Li ${tag}-${i}` : i % 3 === 1 ? `O"Neil ${tag}-${i}` : `客户${tag}-${i}`;
    return validRow(dice, dice.freshPhone(), '1', [name, `code ${dice.int(100000, 999999)}`]);
  });
  return [...out, ...invalidRows(dice, '1', ['nobody', 'code 0'], 2)];
}

/**
 * The five files of round `round`. `tag` and the round go into every value, and the round into
 * every number (the template without values has none), so rounds never share a message: the
 * repeat guard would otherwise rightly refuse a later round's rows. Modes differ by app id.
 */
export function generateRound(options: {
  seed: number;
  round: number;
  scale: Scale;
  appId: string;
  tag: string;
}): ChaosFile[] {
  const size = SIZES[options.scale];
  const dice = new Dice(
    (options.seed ^ Math.imul(options.round + 1, 0x9e3779b1)) >>> 0,
    options.round,
  );
  const tag = `${options.tag}r${options.round}`;
  const groups = smallGroups(dice, size.groups, size.noValues, tag);
  const noValuePhones = groups.filter((r) => r.templateId === '3').map((r) => r.phone!);
  const repeated = [
    ...groups.slice(0, Math.floor(groups.length / 2)),
    ...smallGroups(dice, size.newInRepeat, 0, `${tag}x`),
  ];
  const prefix = `${options.tag}-r${options.round}`;
  const gb18030: Layout = {
    header: ['手机号码', '模板编号', '参数1', '参数2'],
    lineEnd: '\r\n',
    encoding: 'gb18030',
    values: 2,
  };
  // The big group comes last: a large group read after other files of the window is a path of
  // its own (the repeat look-up and the settling of its duplicates share the journal).
  return [
    fileOf(`${prefix}-groups.csv`, groups, ENGLISH, options.appId),
    fileOf(
      `${prefix}-gb18030.csv`,
      chineseGroups(dice, size.gbRows, size.gbGroups, tag),
      gb18030,
      options.appId,
    ),
    fileOf(
      `${prefix}-repeat.csv`,
      dice.shuffle(repeated),
      { ...ENGLISH, lineEnd: '\r\n', bom: true },
      options.appId,
    ),
    fileOf(
      `${prefix}-personalised.csv`,
      personalisedRows(dice, size.personalised, tag),
      ENGLISH,
      options.appId,
    ),
    fileOf(
      `${prefix}-big.csv`,
      bigGroup(dice, size.big, noValuePhones),
      { header: ['phone', 'template'], lineEnd: '\n', values: 0 },
      options.appId,
    ),
  ];
}

/** Every message the files must deliver exactly once: each distinct valid row's key. */
export function expectedMessages(files: readonly ChaosFile[]): Set<string> {
  const expected = new Set<string>();
  for (const file of files) for (const key of file.messages) expected.add(key);
  return expected;
}
