// One CSV record to one IntakeRow. Runs once per row of files with millions of rows, so it avoids
// work on the common path: one regex test for a clean phone, no copies of cells it does not use.
// A problem in a row is recorded on the row (error) and never stops the other rows.
import { unguardCell } from '../csvio/guard.js';
import { type TemplateBook, templateFillError } from '../config/templates.js';
import type { Delimiter } from './delimiter.js';
import type { ColumnMap } from './headers.js';
import type { FileEncoding } from './inspect.js';
import { normalisePhone } from './phone.js';
import { QUOTED_EMPTY } from './quotedEmpty.js';

export interface IntakeOptions {
  encoding: FileEncoding;
  /** What separates cells (FileInspection.delimiter); a comma when not said. */
  delimiter?: Delimiter;
  defaultAppId?: string;
  defaultTemplateId?: string;
  allowInternational: boolean;
  /**
   * A template value longer than this (in characters) makes its row invalid; default
   * DEFAULT_MAX_VALUE_CHARS.
   */
  maxValueChars?: number;
  /**
   * Called once with the mapped header before any row; extraNames name IntakeRow.extras' cells.
   */
  onHeader?: (map: ColumnMap, extraNames: string[]) => void;
  /** Read only the first `bytes` bytes (the ones inspected), whatever was added since. */
  bytes?: number;
  /** The templates file's texts: a row whose values do not fill its template is invalid. */
  templates?: TemplateBook;
  /**
   * Every byte of the file is text in `encoding` (FileInspection.exact): a U+FFFD in a value is
   * text the file holds. Otherwise it marks a byte that is not text, and its row is invalid.
   */
  decodedExactly?: boolean;
  /**
   * Whether the file holds a double quote (FileInspection.quoted); false: it has no quoted empty
   * value to tell apart, and is parsed without looking for one.
   */
  quoted?: boolean;
}

export interface IntakeRow {
  /** Physical line where the record starts (header = line 1 when the file starts with it). */
  line: number;
  /** The phone cell as written (after unguarding). */
  phoneRaw: string;
  /** Normalised number, when valid. */
  phone?: string;
  appId?: string;
  templateId?: string;
  /** Template values exactly as written; trailing empty values dropped, unless quoted (""). */
  datas: string[];
  /** The other columns' cells, in the order of RowShape.extraNames (the file's recorded header). */
  extras: string[];
  /** Why the row is invalid (then it is not sent). */
  error?: string;
  /**
   * An invalid row's cells as read (unguarded), for the rejected file: what the fields above may
   * not keep.
   */
  cells?: string[];
}

export interface RowShape {
  map: ColumnMap;
  /** Key in IntakeRow.extras for each of map.extras. */
  extraNames: string[];
  options: IntakeOptions;
}

const NOT_BLANK = /\S/;

/** True for a record with nothing but whitespace: a blank line, or ",,,," from a spreadsheet. */
export function isBlankRecord(cells: readonly string[]): boolean {
  for (let i = 0; i < cells.length; i++) if (NOT_BLANK.test(cells[i] as string)) return false;
  return true;
}

/** Keys for extra columns: the header text, made unique and never empty. */
export function extraColumnNames(map: ColumnMap): string[] {
  const used = new Set<string>();
  return map.extras.map((column) => {
    const base = map.header[column]?.trim() || `column ${column + 1}`;
    let name = base;
    for (let k = 2; used.has(name); k++) name = `${base} (${k})`;
    used.add(name);
    return name;
  });
}

function cellAt(cells: readonly string[], column: number): string {
  const value = cells[column];
  return value === undefined ? '' : unguardCell(value);
}

/** An id cell (trimmed: ids are never meant to carry spaces), else the default, else undefined. */
function idAt(
  cells: readonly string[],
  column: number | undefined,
  fallback: string | undefined,
): string | undefined {
  const value = column === undefined ? '' : cellAt(cells, column).trim();
  return value !== '' ? value : fallback || undefined;
}

/**
 * Columns of the record whose cell was a quoted empty value (quotedEmpty.ts), now made '' in
 * place; undefined when none was.
 */
export function takeQuotedEmpty(cells: string[]): Set<number> | undefined {
  let quoted: Set<number> | undefined;
  for (let i = 0; i < cells.length; i++) {
    if (cells[i] !== QUOTED_EMPTY) continue;
    cells[i] = '';
    (quoted ??= new Set()).add(i);
  }
  return quoted;
}

/** Trailing empty values are dropped (a file may mix templates), but not a quoted one (""). */
function valuesOf(
  cells: readonly string[],
  columns: readonly number[],
  quotedEmpty: ReadonlySet<number> | undefined,
): string[] {
  const datas = new Array<string>(columns.length);
  for (let i = 0; i < columns.length; i++) datas[i] = cellAt(cells, columns[i] as number);
  let end = datas.length;
  while (end > 0 && datas[end - 1] === '' && !quotedEmpty?.has(columns[end - 1]!)) end--;
  return end === datas.length ? datas : datas.slice(0, end); // (slice: shrinking .length is slow)
}

/** Cells past the header are ignored when empty (spreadsheets pad rows with commas); when not
 * empty they most likely come from an unquoted comma that shifted the values, so the row is
 * refused. */
function overflowError(cells: readonly string[], headerLength: number): string | undefined {
  for (let i = headerLength; i < cells.length; i++) {
    if (NOT_BLANK.test(cells[i] as string)) {
      return `row has ${cells.length} cells but the header has ${headerLength} (an unquoted comma in a value?)`;
    }
  }
  return undefined;
}

/**
 * A cell in a rejected file's "beyond the header" columns: the row is still too long (see
 * ColumnMap.beyond).
 */
function beyondError(cells: readonly string[], map: ColumnMap): string | undefined {
  const filled = map.beyond.filter((column) => NOT_BLANK.test(cells[column] ?? '')).length;
  if (filled === 0) return undefined;
  return `row still has ${filled} cell(s) beyond the header of the file it came from (an unquoted comma in a value?): move each into its column, or quote the value, and empty those cells`;
}

/** A row's template and app ids (undefined when empty and there is no default). */
export function idsOf(
  cells: readonly string[],
  shape: Pick<RowShape, 'map' | 'options'>,
): { templateId: string | undefined; appId: string | undefined } {
  const { map, options } = shape;
  return {
    templateId: idAt(cells, map.templateId, options.defaultTemplateId),
    appId: idAt(cells, map.appId, options.defaultAppId),
  };
}

/** A row's template values (`quotedEmpty`: takeQuotedEmpty's columns). */
export function datasOf(
  cells: readonly string[],
  shape: Pick<RowShape, 'map'>,
  quotedEmpty?: ReadonlySet<number>,
): string[] {
  return valuesOf(cells, shape.map.datas, quotedEmpty);
}

/** What makes rows one group (one message text): the same app, template and values. */
export function groupKeyOf(appId: string, templateId: string, datas: readonly string[]): string {
  return `${appId}\u0000${templateId}\u0000${JSON.stringify(datas)}`;
}

export function buildRow(
  cells: readonly string[],
  line: number,
  shape: RowShape,
  quotedEmpty?: ReadonlySet<number>,
): IntakeRow {
  const { map, options } = shape;
  const phoneRaw = cellAt(cells, map.phone);
  const extras = map.extras.map((column) => cellAt(cells, column));
  const row: IntakeRow = { line, phoneRaw, datas: datasOf(cells, shape, quotedEmpty), extras };
  const errors: string[] = [];
  const phone = normalisePhone(phoneRaw, options.allowInternational);
  if (phone.ok) row.phone = phone.phone;
  else
    errors.push(
      phoneRaw.trim() === map.header[map.phone]?.trim()
        ? 'this row repeats the header row (files joined together?)'
        : phone.reason,
    );
  const { templateId, appId } = idsOf(cells, shape);
  if (templateId !== undefined) row.templateId = templateId;
  else errors.push('template id is empty and no default templateId is set');
  if (appId !== undefined) row.appId = appId;
  else errors.push('app id is empty and no default appId is set');
  if (cells.length > map.header.length) {
    const overflow = overflowError(cells, map.header.length);
    if (overflow) errors.push(overflow);
  }
  if (map.beyond.length > 0) {
    const beyond = beyondError(cells, map);
    if (beyond) errors.push(beyond);
  }
  if (!options.decodedExactly && holdsUndecodable(row.datas, templateId, appId))
    errors.push(UNDECODABLE);
  const gap = emptyValueBeforeFilled(row.datas, map.datas, quotedEmpty);
  if (gap !== undefined)
    errors.push(
      `${valueName(map, gap)} is empty while a later value is not: the message would go with a blank in it`,
    );
  const unsendable = unsendableValue(
    row.datas,
    map,
    options.maxValueChars ?? DEFAULT_MAX_VALUE_CHARS,
  );
  if (unsendable !== undefined) errors.push(unsendable);
  if (options.templates && templateId !== undefined) {
    const unfilled = templateFillError(options.templates, templateId, row.datas.length);
    if (unfilled !== undefined) errors.push(unfilled);
  }
  const damaged = scientificValue(row.datas);
  if (damaged !== undefined) errors.push(scientificError(map, damaged, row.datas[damaged]!));
  if (errors.length > 0) {
    row.error = errors.join('; ');
    row.cells = cells.map(unguardCell);
  }
  return row;
}

/** U+FFFD: what the decoder puts for bytes that are not text in the file's encoding. */
const REPLACEMENT = '\uFFFD';
const UNDECODABLE =
  "a value holds bytes that are not text in the file's encoding (shown as \uFFFD): fix the cell, or save the file again as CSV UTF-8";

/**
 * Whether a cell that would be sent holds U+FFFD (a stray byte): such a message would reach the
 * recipient damaged.
 */
function holdsUndecodable(
  datas: readonly string[],
  templateId: string | undefined,
  appId: string | undefined,
): boolean {
  for (let i = 0; i < datas.length; i++) if (datas[i]!.includes(REPLACEMENT)) return true;
  return (templateId?.includes(REPLACEMENT) ?? false) || (appId?.includes(REPLACEMENT) ?? false);
}

/**
 * Characters of one template value at most, by default: a whole long message of several segments
 * is a few hundred characters, so a longer value is a column that took in more than it should (a
 * note, a pasted document), not text meant for a phone.
 */
export const DEFAULT_MAX_VALUE_CHARS = 500;
// C0 controls but tab, LF and CR (a value may hold tabs and line breaks), DEL, and the C1 controls:
// a NUL or an escape has no place in a message, and the provider's handling of it is unknown.
// eslint-disable-next-line no-control-regex -- control characters are what it looks for
const CONTROL_CHARACTER = /[\u0000-\u0008\u000B\u000C\u000E-\u001F\u007F-\u009F]/;

/**
 * Why a template value cannot be sent as it is (a control character, or too long), if one cannot.
 */
function unsendableValue(
  datas: readonly string[],
  map: ColumnMap,
  maxChars: number,
): string | undefined {
  for (let i = 0; i < datas.length; i++) {
    const value = datas[i]!;
    const control = CONTROL_CHARACTER.exec(value);
    if (control)
      return `${valueName(map, i)} holds a control character (${codePointName(control[0])}) that a message cannot carry: remove it`;
    if (value.length > maxChars && [...value].length > maxChars) {
      return `${valueName(map, i)} is ${[...value].length} characters long, more than the ${maxChars} allowed (SMSDROP_MAX_VALUE_CHARS): a cell that took in more than it should?`;
    }
  }
  return undefined;
}

/** "U+0000" */
function codePointName(ch: string): string {
  return `U+${ch.codePointAt(0)!.toString(16).toUpperCase().padStart(4, '0')}`;
}

/**
 * Excel shows a number of 12 digits or more (an order number, an ID card number…) as 1.23457E+11,
 * and saves it so: the digits are gone, and the message would carry the mangled text. So does a
 * shorter number in a narrow column (a phone number in a value column: 1.38001E+10), always with
 * a capital E and a two-digit exponent. Taken for that: an exponent of 11 or more, however
 * written, and Excel's own form (E+NN) from E+05 up; "3E+5" or "2.5e+10" are sent as written.
 */
const EXCEL_SCIENTIFIC = /^-?\d(?:\.\d+)?E\+(\d+)$/i;
const SMALLEST_EXCEL_EXPONENT = 11;
const EXCEL_OWN_FORM = /^-?\d(?:\.\d{1,5})?E\+(\d\d)$/;
const SMALLEST_NARROW_COLUMN_EXPONENT = 5;

/** The first template value a spreadsheet turned into scientific notation, if any (its index). */
function scientificValue(datas: readonly string[]): number | undefined {
  for (let i = 0; i < datas.length; i++) {
    const value = datas[i]!;
    if (!value.includes('E+') && !value.includes('e+')) continue; // the common path: one scan
    const m = EXCEL_SCIENTIFIC.exec(value.trim());
    if (m && Number(m[1]) >= SMALLEST_EXCEL_EXPONENT) return i;
    const narrow = EXCEL_OWN_FORM.exec(value.trim());
    if (narrow && Number(narrow[1]) >= SMALLEST_NARROW_COLUMN_EXPONENT) return i;
  }
  return undefined;
}

function scientificError(map: ColumnMap, index: number, value: string): string {
  return `${valueName(map, index)} "${value}": a spreadsheet turned a long number into scientific notation and its digits are lost; format the column as text and export again`;
}

/** The header of the index-th template value. */
function valueName(map: ColumnMap, index: number): string {
  return map.header[map.datas[index]!]?.trim() || `template value ${index + 1}`;
}

/**
 * The first empty template value followed by a filled one, if any. Trailing empty values are
 * dropped (a file may mix templates with fewer variables), but an empty one in the middle is a
 * cell left blank by mistake: the provider would send the message with nothing in its place.
 */
function emptyValueBeforeFilled(
  datas: readonly string[],
  columns: readonly number[],
  quotedEmpty: ReadonlySet<number> | undefined,
): number | undefined {
  // the last is never empty unless quoted (trailing ones were dropped); a quoted one is meant
  for (let i = 0; i < datas.length - 1; i++)
    if (!NOT_BLANK.test(datas[i]!) && !quotedEmpty?.has(columns[i]!)) return i;
  return undefined;
}

/** A line break of any kind a CSV file may hold (CRLF, LF, or a lone CR). */
export const LINE_BREAK = /\r\n|\n|\r/;
/** A cell that holds a phone number (as people write them), perhaps in quotes. */
const PHONE_LIKE_CELL = /^\s*"?\s*\+?\d[\d ()-]{6,}\d\s*"?\s*$/;

/**
 * Whether a value that runs over lines holds rows of the list: a line of it (after its first) with
 * a phone number where the phone column is. A value that took in the rows after an open quote
 * starts each of its later lines at the start of a row of the file.
 */
function holdsRows(value: string, phoneColumn: number): boolean {
  const lines = value.split(LINE_BREAK);
  for (let i = 1; i < lines.length; i++) {
    const cell = lines[i]!.split(',')[phoneColumn];
    if (cell !== undefined && PHONE_LIKE_CELL.test(cell)) return true;
  }
  return false;
}

/**
 * A record that runs over several lines (`start` to `end`) because a value in it holds line
 * breaks. That is how a value with line breaks is written; but when a line inside it is a row of
 * the list (holdsRows), a double quote was left open (`"5寸屏,…` … `24" 显示器`) and took the rows after
 * it into one value: sent, one person would get the others' numbers and none of them their own
 * message. The row is then invalid, and its error names the lines it took in.
 */
export function flagSwallowedRows(
  row: IntakeRow,
  cells: readonly string[],
  end: number,
  shape: Pick<RowShape, 'map'>,
): void {
  for (let i = 0; i < cells.length; i++) {
    if (!holdsRows(cells[i]!, shape.map.phone)) continue;
    const column = shape.map.header[i]?.trim() || `column ${i + 1}`;
    const why =
      `the value of ${column} runs from line ${row.line} to line ${end} and holds lines that look like rows of the list: ` +
      'a double quote was left open; this row and the rows it took in are not sent: fix the quote and give the file again';
    row.error = row.error ? `${row.error}; ${why}` : why;
    row.cells = cells.map(unguardCell);
    return;
  }
}
