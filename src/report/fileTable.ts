// `smsdrop report FILE` as a table for people: in REPORT_WIDTH columns, each failure's status,
// code, rows, class and the provider's message (cut to fit) in one line, then what to do about
// each code as wrapped prose; `--wide`: one bordered table with every cell whole, as wide as it
// comes.
import { formatMoment, zoneName } from '../log/time.js';
import { renderTable } from './common.js';
import { type Cost, costLine } from './cost.js';
import { columns, cutEnd, cutMiddle, packFields, plainTable, wrap } from './fit.js';
import type { FailureLine, FileReport } from './summary.js';

/** `report FILE` fits a terminal this wide, but with --wide. */
export const REPORT_WIDTH = 100;
/** The provider's message is cut to fit, but never below this. */
const MIN_MESSAGE_WIDTH = 16;
/** Under "What to do", the text after a code starts this far in. */
const ADVICE_INDENT = '    ';

export function fileReportTable(
  r: FileReport & { cost?: Cost },
  zone?: string,
  wide = false,
): string {
  const width = wide ? Infinity : REPORT_WIDTH;
  const counts = [
    `rows ${r.rows}`,
    `accepted ${r.accepted}`,
    `failed ${r.failed}`,
    `unknown ${r.unknown}`,
    ...(r.cancelled > 0 ? [`cancelled ${r.cancelled}`] : []),
    `invalid ${r.invalid}`,
    `duplicates ${r.duplicates}`,
    `pending ${r.pending}`,
  ];
  const which = `  (id ${r.id}, ${r.status})`;
  const out = [
    `${cutMiddle(r.name, width - columns(which))}${which}`,
    `sha256    ${r.sha256}`,
    ...packFields(counts, width),
  ];
  if (r.repeats > 0)
    out.push(
      ...wrap(
        `of the duplicates, ${r.repeats} go with other files that sent their number the same message (smsdrop export ${r.id} --status duplicate names the file and line of each)`,
        width,
      ),
    );
  out.push(...(wide ? wideFailures(r) : narrowFailures(r)));
  out.push(...invalidLines(r, wide));
  out.push('', ...timingLines(r, width, zone));
  if (r.cost) out.push(...wrap(costLine(r.cost, `the ${r.accepted} accepted number(s)`), width));
  return out.join('\n');
}

function wideFailures(r: FileReport): string[] {
  if (r.failures.length === 0) return [];
  return [
    '',
    'Failures by status code:',
    renderTable(
      ['status', 'code', 'class', 'rows', 'what to do', 'sample message'],
      r.failures.map((f) => [
        f.status,
        f.status_code ?? '-',
        f.class,
        f.count,
        f.what_to_do,
        f.sample_message,
      ]),
    ),
  ];
}

/** One line per failure, its message cut to fit; then what to do, once per advice. */
function narrowFailures(r: FileReport): string[] {
  if (r.failures.length === 0) return [];
  const table = plainTable(
    ['status', 'code', 'rows', 'class', 'message'],
    r.failures.map((f) => [
      f.status,
      f.status_code ?? '-',
      String(f.count),
      f.class,
      f.sample_message ?? '-',
    ]),
    {
      width: REPORT_WIDTH,
      flexible: { column: 4, cut: cutEnd, atLeast: MIN_MESSAGE_WIDTH },
      right: [2],
    },
  );
  const advice = new Map<string, string[]>();
  for (const f of r.failures)
    advice.set(f.what_to_do, [...(advice.get(f.what_to_do) ?? []), label(f)]);
  const what = [...advice].flatMap(([text, labels]) =>
    wrap(`${labels.join(', ')}: ${text}`, REPORT_WIDTH, ADVICE_INDENT),
  );
  return [
    '',
    `Failures by status code (every cell whole: smsdrop report ${r.id} --wide):`,
    ...table,
    '',
    'What to do:',
    ...what,
  ];
}

function label(f: FailureLine): string {
  return f.status_code === null ? `${f.status} without a code` : f.status_code;
}

function invalidLines(r: FileReport, wide: boolean): string[] {
  if (r.invalid_reasons.length === 0) return [];
  const intro = `Invalid rows, not sent (the rows themselves: smsdrop export ${r.id} --status invalid):`;
  if (wide)
    return [
      '',
      intro,
      renderTable(
        ['reason', 'rows'],
        r.invalid_reasons.map((i) => [i.reason, i.count]),
      ),
    ];
  const table = plainTable(
    ['rows', 'reason'],
    r.invalid_reasons.map((i) => [String(i.count), i.reason]),
    {
      width: REPORT_WIDTH,
      flexible: { column: 1, cut: cutEnd, atLeast: MIN_MESSAGE_WIDTH },
      right: [0],
    },
  );
  return ['', ...wrap(intro, REPORT_WIDTH), ...table];
}

function timingLines(r: FileReport, width: number, zone: string | undefined): string[] {
  const t = r.timing;
  return [
    ...packFields(
      [
        `requests ${t.requests}`,
        `first send ${formatMoment(t.first_send, zone)}`,
        `last send ${formatMoment(t.last_send, zone)}`,
        t.requests_per_second === null ? '' : `${t.requests_per_second} requests/s`,
      ],
      width,
    ),
    ...packFields(
      [
        `started ${formatMoment(r.started_at, zone)}`,
        `finished ${formatMoment(r.finished_at, zone)}`,
        `(times in ${zoneName(zone)})`,
      ],
      width,
    ),
  ];
}
