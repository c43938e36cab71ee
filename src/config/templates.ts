// The optional templates file (config/templates.json, or SMSDROP_TEMPLATES_FILE): each template
// id's approved text, e.g. {"1": "【某某公司】您的验证码是{1}，{2}分钟内有效"}. With it, intake
// refuses a row whose values do not fill its template, and the dry run shows each message as it
// will read and what it costs in SMS segments. A file that is named but missing, unreadable or
// malformed stops start-up (E_CONFIG_TEMPLATES): a check the operator asked for must not be
// skipped without a word.
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { SmsdropError } from '../errors.js';

export interface Template {
  text: string;
  /** The highest placeholder {n} of the text: the values a row must give. */
  values: number;
}

export interface TemplateBook {
  file: string;
  byId: ReadonlyMap<string, Template>;
}

export class TemplatesFileError extends SmsdropError {
  constructor(file: string, problem: string) {
    super('E_CONFIG_TEMPLATES', `templates file ${file}: ${problem}`);
  }
}

/**
 * The name of the file looked for in the configuration folder when SMSDROP_TEMPLATES_FILE is unset.
 */
export const DEFAULT_TEMPLATES_FILE = 'templates.json';

/** The templatesFile value that turns the check off even where config/templates.json exists. */
export const TEMPLATES_OFF = 'off';

/**
 * The templates of `named` (the templatesFile setting: it must exist), else of
 * configDir/templates.json when there is one, else undefined (the feature is off, as with `off`).
 */
export function loadTemplates(
  named: string | undefined,
  configDir: string,
): TemplateBook | undefined {
  if (named === TEMPLATES_OFF) return undefined;
  const file = named ? path.resolve(named) : path.join(configDir, DEFAULT_TEMPLATES_FILE);
  if (!named && !existsSync(file)) return undefined;
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    const e = err as NodeJS.ErrnoException;
    throw new TemplatesFileError(
      file,
      e.code === 'ENOENT'
        ? 'no such file (SMSDROP_TEMPLATES_FILE names it)'
        : `cannot be read: ${e.code ?? e.message}`,
    );
  }
  return { file, byId: parseTemplates(file, text) };
}

function parseTemplates(file: string, text: string): Map<string, Template> {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text.replace(/^\uFEFF/, '')); // Notepad saves UTF-8 with a BOM
  } catch {
    throw new TemplatesFileError(
      file,
      'not valid JSON: check the quotes and commas (an object of "template id": "approved text")',
    );
  }
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) {
    throw new TemplatesFileError(
      file,
      'expected a JSON object of "template id": "approved text", e.g. {"1": "【公司】您的验证码是{1}"}',
    );
  }
  const byId = new Map<string, Template>();
  for (const [id, value] of Object.entries(parsed)) {
    if (id.trim() === '' || id.trim() !== id)
      throw new TemplatesFileError(
        file,
        `template id ${JSON.stringify(id)} is empty or has spaces around it`,
      );
    if (typeof value !== 'string' || value.trim() === '')
      throw new TemplatesFileError(
        file,
        `template ${id}: expected its approved text as a non-empty string`,
      );
    byId.set(id, { text: value, values: placeholdersOf(value) });
  }
  return byId;
}

const PLACEHOLDER = /\{(\d+)\}/g;

function placeholdersOf(text: string): number {
  let most = 0;
  for (const match of text.matchAll(PLACEHOLDER)) most = Math.max(most, Number(match[1]));
  return most;
}

/**
 * Why a row's values do not fill its template, if they do not: a template id the file does not
 * know, fewer values than its placeholders, or more (a value the message would not carry).
 */
export function templateFillError(
  book: TemplateBook,
  templateId: string,
  values: number,
): string | undefined {
  const template = book.byId.get(templateId);
  const name = path.basename(book.file);
  if (!template)
    return `template ${templateId} is not in the templates file (${name}): add its approved text there, or correct the template id`;
  if (values === template.values) return undefined;
  const takes =
    template.values === 0
      ? 'takes no values'
      : `takes ${template.values} value(s) ({1}..{${template.values}})`;
  return `template ${templateId} ${takes} but the row gives ${values}: "${template.text}" (${name})`;
}

/** The message as the recipient reads it: the template text with {n} replaced by the n-th value. */
export function render(template: Template, datas: readonly string[]): string {
  return template.text.replace(
    PLACEHOLDER,
    (placeholder, n: string) => datas[Number(n) - 1] ?? placeholder,
  );
}

/**
 * UTF-16 units of a one-segment message, and of each segment of a longer one (the rest carries the
 * joining header): a Chinese message goes out in UCS-2, 140 bytes a segment, 6 of them the header
 * of a long one (3GPP TS 23.038 and 23.040).
 */
const ONE_SEGMENT = 70;
const PER_LONG_SEGMENT = 67;

/**
 * SMS segments a message costs, as the carriers bill it: its UTF-16 units (an emoji or an
 * ideograph beyond the BMP takes two, as in UCS-2 on the air), the signature 【…】 included.
 */
export function segmentsOf(message: string): number {
  const units = message.length;
  return units <= ONE_SEGMENT ? 1 : Math.ceil(units / PER_LONG_SEGMENT);
}
