// The kinds of value a setting takes, as zod schemas: on/off, whole numbers, ids and secrets,
// time zones, and the settings written as text that config/settings/ parses.
import { z } from 'zod';
import { baseUrlProblem } from './settings/baseUrl.js';
import { parseDatabaseUrl, parseLease } from './settings/database.js';
import { parseKeep, parseRepeatWindow } from './settings/durations.js';
import { parseHttpAddress } from './settings/httpAddress.js';
import { parseWebhookUrls } from './settings/webhookUrls.js';
import { parseMessageWindow, parseWindowHours } from './settings/windows.js';

export const onOff = z.preprocess(
  (v) => {
    if (typeof v !== 'string') return v;
    const s = v.trim().toLowerCase();
    if (['on', 'true', '1', 'yes'].includes(s)) return true;
    if (['off', 'false', '0', 'no'].includes(s)) return false;
    return v;
  },
  z.boolean({ invalid_type_error: 'expected on or off' }),
);

export const int = (min: number, max: number) =>
  z.coerce
    .number({ invalid_type_error: `expected a whole number from ${min} to ${max}` })
    .int(`expected a whole number from ${min} to ${max}`)
    .min(min, `expected a whole number from ${min} to ${max}`)
    .max(max, `expected a whole number from ${min} to ${max}`);

/** An empty value (an empty environment variable, null in JSON) is the same as none. */
export const blankAsUnset = (v: unknown): unknown => (v === '' || v === null ? undefined : v);

export const optionalText = z.preprocess(blankAsUnset, z.string().optional());
/**
 * An id or a secret: never meant to hold spaces, so the spaces and line ends around it go (a
 * token pasted with a CR from a Windows file signed every request wrong: 111109, and nothing
 * said why).
 */
export const idText = z.preprocess(
  (v) => blankAsUnset(typeof v === 'string' ? v.trim() : v),
  z.string().optional(),
);

/** The provider's template ids are digits: another is refused (160057, 112318), after sending. */
export const templateIdText = z.preprocess(
  (v) => blankAsUnset(typeof v === 'string' ? v.trim() : v),
  z
    .string()
    .regex(/^\d+$/, "expected the template's number, digits only (the provider's template ids)")
    .optional(),
);

const isTimeZone = (tz: string): boolean => {
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: tz });
    return true;
  } catch {
    return false;
  }
};

/**
 * An IANA zone written Area/City (or UTC). Short names are refused although Intl knows some of
 * them: CST is America/Chicago to it, not China Standard Time, so a sending window of
 * 08:00-22:00 CST would send through the Chinese night.
 */
const isAreaZone = (tz: string): boolean => (tz.includes('/') || tz === 'UTC') && isTimeZone(tz);

export const ianaZone = z
  .string()
  .refine(
    isAreaZone,
    'expected an IANA time zone written Area/City, such as Asia/Shanghai, or UTC (short names such as CST are ambiguous)',
  );
export const timeZone = z.preprocess(blankAsUnset, ianaZone.optional());

/**
 * A setting written as text and read once, here, by `parse`: the value, or the reason the text
 * is not one (then the setting's error).
 */
export function parsedText<T extends object>(parse: (text: string) => T | string) {
  return z.preprocess(
    blankAsUnset,
    z
      .string()
      .transform((text, ctx) => {
        const value = parse(text);
        if (typeof value !== 'string') return value;
        ctx.addIssue({ code: z.ZodIssueCode.custom, message: value });
        return z.NEVER;
      })
      .optional(),
  );
}

/** "HOST:PORT" or off: where the daemon's dashboard, metrics and health check listen. */
export const httpAddress = parsedText(parseHttpAddress).default('127.0.0.1:7070');
/** One or more webhook URLs, comma-separated. */
export const webhookUrls = parsedText(parseWebhookUrls);

/** "HH:MM-HH:MM": the sending window's hours. */
export const sendWindow = parsedText(parseWindowHours);
/** "N/DURATION" (e.g. 10000/1h): the message window. */
export const messageWindow = parsedText(parseMessageWindow);
/** "DURATION" (e.g. 24h) or off: how long another file's message to a number counts as sent. */
export const repeatWindow = parsedText(parseRepeatWindow).default('24h');
/**
 * "DURATION" (e.g. 24h) or off: how long after its last accepted request a file stopped part-way
 * resumes on its own (the same form as the repeat window).
 */
export const resumeWithin = parsedText(parseRepeatWindow).default('24h');
/**
 * "DURATION" or off: how long an ended file's rows stay (journal/prune.ts). 90 days: a quarter's
 * questions and retries can still be answered, and it is no shorter than the longest repeat window
 * or resumption the settings allow, so the default never refuses a configuration.
 */
export const keep = parsedText(parseKeep).default('90d');

export const baseUrl = z.preprocess(
  blankAsUnset,
  z
    .string()
    .superRefine((u, ctx) => {
      const problem = baseUrlProblem(u);
      if (problem) ctx.addIssue({ code: z.ZodIssueCode.custom, message: problem });
    })
    .optional(),
);

/** postgres://… : the PostgreSQL journal (settings/database.ts); unset: the SQLite journal. */
export const databaseUrl = parsedText(parseDatabaseUrl);
/** "DURATION": how long a node's claims on batches last unrenewed. */
export const lease = parsedText(parseLease).default('30s');
/** A node's id in a cluster: printable, no spaces (the default, host and pid, is made at start). */
export const nodeId = z.preprocess(
  (v) => blankAsUnset(typeof v === 'string' ? v.trim() : v),
  z
    .string()
    .regex(/^[\x21-\x7e]{1,100}$/, 'expected 1 to 100 printable characters without spaces')
    .optional(),
);

/**
 * A price written in decimal (0.045), kept as written: the cost is reckoned in decimal from it
 * (report/cost.ts), never in binary floating point. A number in a JSON file is taken as its text.
 */
export const pricePerSegment = z.preprocess(
  (v) => blankAsUnset(typeof v === 'number' ? String(v) : typeof v === 'string' ? v.trim() : v),
  z
    .string()
    .regex(/^\d{1,12}(\.\d{1,12})?$/, 'expected a decimal price such as 0.045 (a dot, no currency)')
    .optional(),
);

/** What the cost's amount is followed by (CNY, 元…): a short word without spaces. */
export const currency = z.preprocess(
  (v) => blankAsUnset(typeof v === 'string' ? v.trim() : v),
  z
    .string()
    .regex(/^\S{1,10}$/u, 'expected a short currency name without spaces, such as CNY')
    .optional(),
);
