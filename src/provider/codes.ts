// Provider status codes as data: which RejectionClass each code belongs to (the grouping of
// shared/reference/provider-facts.md) and a plain-language meaning for reports. The classes are
// our judgement, not the provider's; keep them here, in one table, so a change is one line.
import type { RejectionClass } from './types.js';

/** Inclusive numeric ranges. A single code in CODE_CLASSES wins over a range that contains it. */
const RANGES: ReadonlyArray<readonly [from: number, to: number, cls: RejectionClass]> = [
  [111000, 111099, 'transient'], // platform internal errors
  [111100, 111110, 'account-fatal'], // URL, auth header (111104/111105: account id or timestamp empty), sig and timestamp format
  [111128, 111143, 'account-fatal'], // account state: not activated, suspended, closed, no balance
  [111169, 111182, 'account-fatal'], // application: missing, not of this account
  [160001, 160010, 'transient'], // channel busy
  [161000, 161099, 'transient'], // 1610xx: internal channel errors
];

const SINGLE_CODES: Record<RejectionClass, readonly string[]> = {
  'account-fatal': ['111113', '111115', '111212', '111226', '112303', '112310', '113302', '160053'],
  clock: ['111106'],
  transient: ['111111', '111112', '111114', '111116', '160000', '160016'],
  'rate-limited': [
    '160038',
    '160039',
    '160040',
    '160041',
    '112314',
    '160015',
    '160022',
    '160021',
    '160056',
  ],
  'number-rejected': [
    '160042',
    '112316',
    '112317',
    '160034',
    '160051',
    '160068',
    '160072',
    '160073',
    '160074',
    '112319',
    '160013',
    // 160059: international numbers cannot go in bulk (halves isolate them); 160070: a custom
    // template cannot go to an international number (that number fails with the code).
    '160059',
    '160070',
  ],
  'batch-rejected': [
    '112300',
    '112306',
    '160044',
    '112307',
    '112308',
    '112311',
    '112313',
    '112323',
    '160032',
    '160043',
    '160052',
    '160031',
    '160030',
    '160033',
    '160049',
    '160011',
    '160018',
    '160037',
    '160020',
    '160045',
    '160048',
    '160017',
    '160055',
    '160057',
    '112318',
    '112309',
    '112304',
    '112609',
    '112610',
    '112611',
    '112612', // chunked body; Accept, Content-Type, Content-Length missing or wrong: a client bug
  ],
  'duplicate-request': ['160054'],
  ambiguous: ['160050', '160063', '160064'],
  'outside-hours': ['160071'],
};

const CODE_CLASSES: ReadonlyMap<string, RejectionClass> = new Map(
  Object.entries(SINGLE_CODES).flatMap(([cls, codes]) =>
    codes.map((code) => [code, cls as RejectionClass] as const),
  ),
);

/** The class the code tables give the code, or undefined when they do not explain it. */
function tableClassOf(code: string): RejectionClass | undefined {
  const single = CODE_CLASSES.get(code);
  if (single) return single;
  if (!/^\d{6}$/.test(code)) return undefined;
  const n = Number(code);
  return RANGES.find(([from, to]) => n >= from && n <= to)?.[2];
}

/**
 * The class of a non-success statusCode. Unknown codes are 'batch-rejected': a failure we do not
 * understand must not be retried automatically, and must not stop the whole account either.
 */
export function classifyStatusCode(code: string): RejectionClass {
  return tableClassOf(code) ?? 'batch-rejected';
}

/** Whether the code tables explain the code (an unknown one is logged and counted in reports). */
export function isKnownStatusCode(code: string): boolean {
  return tableClassOf(code) !== undefined;
}

/**
 * "Too many concurrent requests" and "calls too close together": besides the retry, the sender
 * lowers the requests it keeps in flight (send/concurrency.ts).
 */
export const CONCURRENCY_CODES: ReadonlySet<string> = new Set([
  '111111',
  '111112',
  '111114',
  '111116',
]);

/** What an operator should do about a batch answered with a code of this class. */
export const CLASS_ADVICE: Record<RejectionClass, string> = {
  'account-fatal':
    'account or application problem: sending stopped, fix the account settings and resume',
  clock: 'timestamp expired: check the host clock and time zone',
  transient: 'provider temporarily failed: retried automatically with the same reqId',
  'rate-limited': 'a number or template hit a frequency cap: resend later',
  'number-rejected': 'one or more numbers are unusable: fix or remove them and resend',
  'batch-rejected': 'the request itself was refused: resending it unchanged cannot help',
  'duplicate-request': 'the provider had already accepted this reqId: counted as accepted',
  ambiguous:
    'the provider reports a failure but may have sent some messages: resend only with the same reqId',
  'outside-hours':
    'marketing message outside the hours the provider allows: it waits and is sent when they come',
};

/** Meanings of the codes an operator meets most often, phrased as "what happened: what to do". */
export const CODE_MEANINGS: Readonly<Record<string, string>> = {
  '111106': 'timestamp expired: check the host clock and time zone',
  '111109': 'signature check failed: check the account SID and auth token',
  '111113': 'timestamp format wrong: check the host clock',
  '111111': 'too many concurrent requests: lower the concurrency',
  '111112': 'too many concurrent requests: retried, with fewer requests in flight',
  '111114': 'too many concurrent requests: retried, with fewer requests in flight',
  '111115': 'request IP not on the whitelist: add this host to the console whitelist',
  '111116': 'calls too close together: retried, with fewer requests in flight',
  '111212': 'application not live: publish the app in the console',
  '111226': 'application deleted or disabled: check the appId in the console',
  '111138': 'account not activated: activate it in the console',
  '111139': 'account suspended: contact the provider',
  '111140': 'account closed: contact the provider',
  '111141': 'no such account: check the account SID',
  '111142': 'account balance insufficient: top up the account',
  '111143': 'auth token invalid: check the auth token',
  '111181': 'no such application: check the appId',
  '111182': 'application does not belong to this account: check the appId',
  '112300': 'no recipient numbers',
  '112306': 'no recipient numbers',
  '112303': 'application has no SMS capability: enable SMS for the app',
  '112307': 'template id missing',
  '112310': 'application not live: only registered test numbers can receive',
  '112311': 'template not found: check the templateId',
  '112313': 'template not approved',
  '112314': 'daily cap reached for a number: resend tomorrow',
  '160000': 'provider system error: retried automatically',
  '160031': 'request body could not be parsed',
  '160032': 'template not found or not approved: check the templateId',
  '160034': 'number on a blacklist: remove it',
  '160038': 'verification codes sent too often to a number: resend in a few minutes',
  '160042': 'number format wrong: fix the number',
  '160043': 'application and template do not match: check appId and templateId',
  '160045': 'duplicate numbers in one request',
  '160048': 'more than 200 numbers in one request: lower the numbers per request',
  '160050': 'sending failed, some messages may have gone out: resend only with the same reqId',
  '160052': 'template variables do not match the template: check the data columns',
  '160053': 'IP address not whitelisted: add this host to the console whitelist',
  '160054': 'duplicate reqId: already accepted',
  '160055': 'reqId longer than 32 characters',
  '160059': 'international numbers cannot be sent in bulk: each goes in a request of its own',
  '160070':
    'custom templates do not support international numbers: use a template approved for them',
  '160071':
    'marketing message outside the allowed hours: sent when they come (set SMSDROP_SEND_WINDOW to match)',
  '112609': 'chunked request body refused: a client bug, report it',
  '112610': 'Accept header missing or wrong: a client bug, report it',
  '112611': 'Content-Type header missing or wrong: a client bug, report it',
  '112612': 'Content-Length header missing or wrong: a client bug, report it',
};

/**
 * Codes that say a number will never take a message (blacklisted, unsubscribed from marketing):
 * a number answered with one of them alone is suppressed (journal/suppression.ts). Not the format
 * errors: a wrong number is fixed in the file, and intake rejects most of them anyway.
 */
export const SUPPRESSING_CODES: ReadonlySet<string> = new Set([
  '112317',
  '160034',
  '160051',
  '160068',
  '160072',
  '160073',
  '160074',
]);

/** One line for a report: "111142: account balance insufficient: top up the account". */
export function describeStatusCode(code: string): string {
  return `${code}: ${CODE_MEANINGS[code] ?? CLASS_ADVICE[classifyStatusCode(code)]}`;
}

/** The error codes of an answer that stops sending for the account (docs/errors.md). */
export type AccountStopCode =
  | 'E_PROVIDER_AUTH'
  | 'E_PROVIDER_ACCOUNT'
  | 'E_PROVIDER_BALANCE'
  | 'E_PROVIDER_APP'
  | 'E_PROVIDER_IP'
  | 'E_PROVIDER_CLOCK';

const STOP_CODES: Readonly<Record<string, AccountStopCode>> = {
  '111106': 'E_PROVIDER_CLOCK',
  '111113': 'E_PROVIDER_CLOCK',
  '111115': 'E_PROVIDER_IP',
  '160053': 'E_PROVIDER_IP',
  '111142': 'E_PROVIDER_BALANCE',
  '111143': 'E_PROVIDER_AUTH',
  '111212': 'E_PROVIDER_APP',
  '111226': 'E_PROVIDER_APP',
  '112303': 'E_PROVIDER_APP',
  '112310': 'E_PROVIDER_APP',
  '113302': 'E_PROVIDER_APP',
};

/**
 * smsdrop's code for a provider status code that stops sending for the account (account-fatal,
 * or a timestamp refused twice): what the operator has to fix, by the ranges of
 * provider-facts.md. Any other account-fatal code is the account's.
 */
export function accountStopCode(statusCode: string): AccountStopCode {
  const single = STOP_CODES[statusCode];
  if (single) return single;
  const n = /^\d{6}$/.test(statusCode) ? Number(statusCode) : 0;
  if (n >= 111100 && n <= 111110) return 'E_PROVIDER_AUTH';
  if (n >= 111169 && n <= 111182) return 'E_PROVIDER_APP';
  return 'E_PROVIDER_ACCOUNT';
}
