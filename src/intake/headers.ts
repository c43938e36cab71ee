// Header mapping: which column holds the phone number, the template id, the app id and the
// template values. Names are matched loosely (case, spaces, _ and - ignored; English and Chinese
// aliases) because people type them; anything ambiguous refuses the file rather than guess,
// since a wrong guess would send wrong text to real phones.
import { FileRefusedError, type RefusalCode } from './errors.js';

export interface ColumnMap {
  phone: number;
  templateId?: number;
  appId?: number;
  /** Column index of template value 1..N, in order. */
  datas: number[];
  /** Header cells as written. */
  header: string[];
  /** Every other column, kept for reports. */
  extras: number[];
  /**
   * Columns a rejected file names "beyond the header N": the cells a row had past the header of
   * the file it came from. A value there is still a row too long, so dropped back unfixed, the
   * row is refused again instead of sent with its values shifted.
   */
  beyond: number[];
}

/** The header of the N-th cell past the header, in a rejected file (see ColumnMap.beyond). */
export const beyondHeaderName = (n: number): string => `beyond the header ${n}`;
const BEYOND_COLUMN = /^beyondtheheader\d+$/;

/**
 * Rows a spreadsheet's export may put above the header (a title, a date, a blank-looking line of
 * labels): the header is the first of the first TITLE_ROWS_AT_MOST + 1 rows that names a phone
 * column. Further down, a file without one is refused.
 */
export const TITLE_ROWS_AT_MOST = 5;

type Role = 'phone' | 'templateId' | 'appId';

const ROLE_ALIASES: Record<Role, string[]> = {
  phone: ['phone', 'mobile', 'to', 'number', 'tel', '手机', '手机号', '手机号码', '电话', '号码'],
  templateId: ['templateid', 'template', '模板', '模板id', '模板编号'],
  appId: ['appid', 'app', '应用id'],
};
const ROLE_OF = new Map<string, Role>(
  Object.entries(ROLE_ALIASES).flatMap(([role, names]) =>
    names.map((n) => [n, role as Role] as const),
  ),
);
const ROLE_LABEL: Record<Role, string> = { phone: 'phone', templateId: 'template', appId: 'app' };

const IGNORED = /[\s_-]/g;
const VALUE_COLUMN = /^(data|var|param|参数|变量)(\d+)$/;

/** The name as compared: lower case, without spaces (any kind), _ and -. */
export function normaliseHeaderName(name: string): string {
  return name.replace(IGNORED, '').toLowerCase();
}

function refuse(message: string, code: RefusalCode): never {
  throw new FileRefusedError(code, '', message, 1);
}

const quoted = (header: string[], columns: number[]): string =>
  columns.map((i) => `"${header[i]}"`).join(' and ');

function singleColumn(header: string[], role: Role, columns: number[]): number | undefined {
  if (columns.length > 1)
    refuse(
      `two ${ROLE_LABEL[role]} columns (${quoted(header, columns)}): keep one`,
      'E_HEADER_TWO_COLUMNS',
    );
  return columns[0];
}

/** Value columns by number (data1, var2, 参数3 ... one numbering); refuses duplicates and gaps. */
function valueColumns(header: string[], byNumber: Map<number, number[]>): number[] {
  const datas: number[] = [];
  const highest = Math.max(0, ...byNumber.keys());
  for (let n = 1; n <= highest; n++) {
    const columns = byNumber.get(n) ?? [];
    if (columns.length > 1)
      refuse(
        `two columns for template value ${n} (${quoted(header, columns)}): keep one`,
        'E_HEADER_TWO_COLUMNS',
      );
    const column = columns[0];
    if (column === undefined) {
      const found = [...byNumber.values()].flat().sort((a, b) => a - b);
      refuse(
        `template value columns must be numbered from 1 without gaps; value ${n} is missing (found ${quoted(header, found)})`,
        'E_HEADER_VALUE_COLUMNS',
      );
    }
    datas.push(column);
  }
  return datas;
}

function refuseNoPhone(header: string[]): never {
  const looksLikeData = header.some((cell) => /^\+?\d[\d\s-]{5,}$/.test(cell.trim()));
  refuse(
    'no phone column: the first row must be a header with a column named phone, mobile, to, number, tel, ' +
      '手机, 手机号, 手机号码, 电话 or 号码' +
      (looksLikeData ? ' (the first row looks like data: add a header row)' : '') +
      otherSeparatorHint(header),
    'E_NO_PHONE_COLUMN',
  );
}

/**
 * A header read as one cell that holds semicolons or tabs: the file was saved with another
 * separator (Excel in some locales writes ";", "Unicode text" and copies write tabs).
 */
function otherSeparatorHint(header: string[]): string {
  if (header.length !== 1) return '';
  const separator = header[0]!.includes('\t')
    ? 'tabs'
    : header[0]!.includes(';')
      ? 'semicolons'
      : undefined;
  return separator
    ? ` (the header is one cell separated by ${separator}: save the file as CSV with commas, "CSV UTF-8" in Excel)`
    : '';
}

/** Maps header cells to roles. Throws FileRefusedError (line 1, no file name) when ambiguous. */
export function mapHeader(header: string[]): ColumnMap {
  const roles: Record<Role, number[]> = { phone: [], templateId: [], appId: [] };
  const byNumber = new Map<number, number[]>();
  const extras: number[] = [];
  const beyond: number[] = [];
  header.forEach((cell, i) => {
    const name = normaliseHeaderName(cell);
    const role = ROLE_OF.get(name);
    const value = VALUE_COLUMN.exec(name);
    if (role) roles[role].push(i);
    else if (BEYOND_COLUMN.test(name)) beyond.push(i);
    else if (value) {
      const n = Number(value[2]);
      if (n === 0)
        refuse(
          `template value columns are numbered from 1 ("${cell}" is numbered 0)`,
          'E_HEADER_VALUE_COLUMNS',
        );
      byNumber.set(n, [...(byNumber.get(n) ?? []), i]);
    } else extras.push(i);
  });
  if (roles.phone.length === 0) refuseNoPhone(header);
  const map: ColumnMap = {
    phone: singleColumn(header, 'phone', roles.phone) as number,
    datas: valueColumns(header, byNumber),
    header: [...header],
    extras,
    beyond,
  };
  const templateId = singleColumn(header, 'templateId', roles.templateId);
  const appId = singleColumn(header, 'appId', roles.appId);
  if (templateId !== undefined) map.templateId = templateId;
  if (appId !== undefined) map.appId = appId;
  return map;
}
