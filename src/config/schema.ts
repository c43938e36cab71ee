// Every setting in one table: its schema (with its default), its environment variable and what it
// means; the Config type is read off it.
import { z } from 'zod';
import { type ConfigCode, SmsdropError } from '../errors.js';
import { WEBHOOK_FORMATS } from './settings/webhookUrls.js';
import type { TemplateBook } from './templates.js';
import {
  baseUrl,
  blankAsUnset,
  currency,
  databaseUrl,
  httpAddress,
  ianaZone,
  idText,
  int,
  keep,
  lease,
  messageWindow,
  nodeId,
  onOff,
  optionalText,
  pricePerSegment,
  repeatWindow,
  resumeWithin,
  sendWindow,
  templateIdText,
  timeZone,
  webhookUrls,
} from './fields.js';

/** Every setting: its schema (with its default), its environment variable, and what it means. */
export const SETTINGS = {
  baseUrl: {
    schema: baseUrl,
    env: 'SMSDROP_BASE_URL',
    doc: 'Provider base URL, e.g. https://app.cloopen.com:8883. Unset: the built-in simulator is used.',
  },
  accountSid: { schema: idText, env: 'SMSDROP_ACCOUNT_SID', doc: 'Main account id (ACCOUNT SID).' },
  authToken: {
    schema: idText,
    env: 'SMSDROP_AUTH_TOKEN',
    doc: 'Main account auth token. Never printed or logged.',
  },
  appId: {
    schema: idText,
    env: 'SMSDROP_APP_ID',
    doc: 'appId used when a CSV has no appId column.',
  },
  templateId: {
    schema: templateIdText,
    env: 'SMSDROP_TEMPLATE_ID',
    doc: 'templateId used when a CSV has no template column.',
  },
  format: {
    schema: z.enum(['json', 'xml']).default('json'),
    env: 'SMSDROP_FORMAT',
    doc: 'Request body and response format: json or xml.',
  },
  concurrency: {
    schema: int(1, 256).default(8),
    env: 'SMSDROP_CONCURRENCY',
    doc: 'Requests in flight at most.',
  },
  maxPerRequest: {
    schema: int(1, 200).default(200),
    env: 'SMSDROP_MAX_PER_REQUEST',
    doc: 'Numbers per request, 1 to 200.',
  },
  reqId: {
    schema: onOff.default(true),
    env: 'SMSDROP_REQ_ID',
    doc: 'on/off: send a stable reqId per batch so a retry after an ambiguous outcome cannot send twice.',
  },
  caFile: {
    schema: optionalText,
    env: 'SMSDROP_CA_FILE',
    doc: 'Extra CA certificate (PEM) to trust for HTTPS.',
  },
  dataDir: {
    schema: z.string().min(1).default('./data'),
    env: 'SMSDROP_DATA_DIR',
    doc: 'Root of inbox/, processing/, done/, failed/, the journal and logs.',
  },
  shareWithGroup: {
    schema: onOff.default(false),
    env: 'SMSDROP_SHARE_WITH_GROUP',
    doc: "on/off: the owner's group may read (not write) the folders and files smsdrop writes (the data directory, backups, exports, result files); off: only the owner. Other users never may, whatever the umask. See docs/operations.md#who-can-read-what.",
  },
  strictPermissions: {
    schema: onOff.default(false),
    env: 'SMSDROP_STRICT_PERMISSIONS',
    doc: 'on/off: a data directory or journal other users may read stops start-up (E_DATA_DIR_OPEN, exit 2) instead of a warning naming the command that closes it.',
  },
  timezone: {
    schema: timeZone,
    env: 'SMSDROP_TIMEZONE',
    doc: 'IANA zone of the signing timestamp. Unset: the host local zone.',
  },
  connectTimeoutMs: {
    schema: int(100, 600_000).default(5_000),
    env: 'SMSDROP_CONNECT_TIMEOUT_MS',
    doc: 'TCP/TLS connect timeout. A request that times out here was never sent.',
  },
  responseTimeoutMs: {
    schema: int(100, 3_600_000).default(30_000),
    env: 'SMSDROP_RESPONSE_TIMEOUT_MS',
    doc: 'Time allowed for the answer once the request is written. Past it the batch is in doubt.',
  },
  requestsPerSecond: {
    schema: z.coerce.number().min(0, 'expected 0 (no limit) or a positive number').default(0),
    env: 'SMSDROP_REQUESTS_PER_SECOND',
    doc: 'Requests started per second at most; 0 means no limit beyond concurrency.',
  },
  messagesPerSecond: {
    schema: z.coerce.number().min(0, 'expected 0 (no limit) or a positive number').default(0),
    env: 'SMSDROP_MESSAGES_PER_SECOND',
    doc: 'Numbers sent to per second at most (a request of n numbers counts n); 0 means no limit.',
  },
  messageWindow: {
    schema: messageWindow,
    env: 'SMSDROP_MESSAGE_WINDOW',
    doc: 'At most N numbers in requests started within any span of the given length, N/DURATION (e.g. 10000/1h, 500/10m; s, m, h or d). Unset: no limit.',
  },
  maxAttempts: {
    schema: int(1, 100).default(6),
    env: 'SMSDROP_MAX_ATTEMPTS',
    doc: 'Attempts per batch for transient and not-sent outcomes before it is failed.',
  },
  retryBaseMs: {
    schema: int(0, 3_600_000).default(500),
    env: 'SMSDROP_RETRY_BASE_MS',
    doc: 'First retry delay; doubles each attempt, with jitter.',
  },
  retryMaxMs: {
    schema: int(0, 3_600_000).default(60_000),
    env: 'SMSDROP_RETRY_MAX_MS',
    doc: 'Largest retry delay.',
  },
  rateLimitDelayMs: {
    schema: int(0, 86_400_000).default(300_000),
    env: 'SMSDROP_RATE_LIMIT_DELAY_MS',
    doc: 'Delay before resending a batch the provider rate-limited.',
  },
  rateLimitMaxDeferrals: {
    schema: int(0, 100).default(2),
    env: 'SMSDROP_RATE_LIMIT_MAX_DEFERRALS',
    doc: 'Rate-limit deferrals per batch before it is failed with the code.',
  },
  sendWindow: {
    schema: sendWindow,
    env: 'SMSDROP_SEND_WINDOW',
    doc: 'Hours in which requests may start, HH:MM-HH:MM (e.g. 08:00-22:00; 22:00-06:00 spans midnight), in sendWindowZone. Unset: any hour.',
  },
  sendWindowZone: {
    schema: z.preprocess(blankAsUnset, ianaZone.default('Asia/Shanghai')),
    env: 'SMSDROP_SEND_WINDOW_ZONE',
    doc: "IANA zone of the sending window's hours (the recipients' clock).",
  },
  pauseAfterFailures: {
    schema: int(0, 100_000).default(20),
    env: 'SMSDROP_PAUSE_AFTER_FAILURES',
    doc: 'Requests in a row with no answer from the provider (not sent, in doubt, transient error) that pause sending as for an account problem, so an outage does not use up every batch; 0 = never.',
  },
  sendDuringIntake: {
    schema: onOff.default(true),
    env: 'SMSDROP_SEND_DURING_INTAKE',
    doc: 'on/off: start sending full requests while a file is still being read (only for files without a double quote, which cannot be refused partway); off: every row is read before the first request.',
  },
  repeatWindow: {
    schema: repeatWindow,
    env: 'SMSDROP_REPEAT_WINDOW',
    doc: "How long a message another file sent to a number keeps a new file's row with the same message and number from sending it again (Excel's re-save of a sent list, a list dropped again with rows added), e.g. 24h, 7d, 90m, or off. `send --resend` sends anyway.",
  },
  allowInternational: {
    schema: onOff.default(false),
    env: 'SMSDROP_ALLOW_INTERNATIONAL',
    doc: 'on/off: accept international numbers (+CC or 00CC), sent as 00...',
  },
  maxValueChars: {
    schema: int(1, 100_000).default(500),
    env: 'SMSDROP_MAX_VALUE_CHARS',
    doc: 'Characters one template value may hold at most; a longer value makes its row invalid (a whole long message is a few hundred characters).',
  },
  encoding: {
    schema: z.preprocess(
      (v) => {
        if (typeof v !== 'string') return blankAsUnset(v);
        const s = v.trim().toLowerCase();
        if (s === 'utf8') return 'utf-8';
        return s === 'gbk' || s === 'gb2312' ? 'gb18030' : s || undefined;
      },
      z
        .enum(['auto', 'utf-8', 'gb18030'], {
          errorMap: () => ({ message: 'expected auto, utf8 or gb18030' }),
        })
        .default('auto'),
    ),
    env: 'SMSDROP_ENCODING',
    doc: 'auto, utf8 or gb18030: the encoding of files without a UTF-8 BOM and without one in their name (NAME.utf8.csv, NAME.gb18030.csv); auto tells them apart from the bytes, and refuses a file that reads plausibly both ways (E_FILE_ENCODING_AMBIGUOUS).',
  },
  resumeWithin: {
    schema: resumeWithin,
    env: 'SMSDROP_RESUME_WITHIN',
    doc: 'Daemon: a file whose sending stopped part-way (a stop, a crash, an account pause) resumes on its own only this long after its last accepted request or its last taking from inbox/, whichever is later (at least as long as the sending and message windows can make it wait), e.g. 24h, 7d, 90m, or off. Later, it goes to failed/ with a note instead of reaching people by surprise; dropped into inbox/ again, it sends the rest.',
  },
  keep: {
    schema: keep,
    env: 'SMSDROP_KEEP',
    doc: "How long a file's rows (its numbers and values), its attempts and its files in done/ and failed/ are kept after it ended (done or refused), e.g. 90d, 30d, 12h, or off (keep everything). Older ones are pruned: one line per file stays (name, sha256, counts, dates), so `report` lists it and the same bytes dropped again are still not sent. At least as long as SMSDROP_REPEAT_WINDOW and SMSDROP_RESUME_WITHIN (unless off): start-up stops otherwise (E_CONFIG_KEEP). The daemon prunes at start and once a day; `smsdrop prune` does it by hand.",
  },
  pauseCooldownMs: {
    schema: int(1_000, 86_400_000).default(300_000),
    env: 'SMSDROP_PAUSE_COOLDOWN_MS',
    doc: 'Daemon: after an account-fatal answer, wait this long before trying to send again.',
  },
  stabilityMs: {
    schema: int(0, 600_000).default(2_000),
    env: 'SMSDROP_STABILITY_MS',
    doc: 'Daemon: a dropped file is taken once its size has not changed for this long (four times as long when it does not end with a line break).',
  },
  inboxRescanMs: {
    schema: int(1_000, 3_600_000).default(10_000),
    env: 'SMSDROP_INBOX_RESCAN_MS',
    doc: 'Daemon: how often inbox/ is scanned whatever the file-system events say, a safety net: a stable file no event announced is taken, and the log says it was found by the rescan.',
  },
  inboxPollMs: {
    schema: int(0, 600_000)
      .refine(
        (ms) => ms === 0 || ms >= 100,
        'expected 0 (events) or a whole number from 100 to 600000',
      )
      .default(0),
    env: 'SMSDROP_INBOX_POLL_MS',
    doc: 'Daemon: 0 (default): inbox/ is watched through file-system events (inotify). Otherwise inbox/ and every file in it are polled every this many ms: for a network share (SMB/CIFS, NFS), where files written by other machines raise no event (docs/operations.md).',
  },
  graceMs: {
    schema: int(0, 600_000).default(30_000),
    env: 'SMSDROP_GRACE_MS',
    doc: 'Daemon: on SIGTERM/SIGINT, how long requests in flight may take to finish.',
  },
  maxFilesInProgress: {
    schema: int(1, 64).default(2),
    env: 'SMSDROP_MAX_FILES',
    doc: 'Daemon: files processed at the same time (request concurrency stays bounded overall).',
  },
  approval: {
    schema: onOff.default(false),
    env: 'SMSDROP_APPROVAL',
    doc: 'Daemon, on/off: a dropped file is read, checked and planned, then held (nothing sent) until `smsdrop approve FILE` (or the page, or the API); its preview is in `smsdrop status`.',
  },
  journalSync: {
    schema: z.enum(['normal', 'full']).default('normal'),
    env: 'SMSDROP_JOURNAL_SYNC',
    doc: 'normal: the journal survives any crash of the process; full: also a power loss, at the cost of a disk flush per request.',
  },
  databaseUrl: {
    schema: databaseUrl,
    env: 'SMSDROP_DATABASE_URL',
    doc: 'postgres://USER:PASSWORD@HOST/DATABASE: keep the journal in PostgreSQL, which several daemons (each with its own data directory) may share (docs/postgres.md). TLS, verified, to any host but loopback; the URL takes no ssl parameters. Unset: the SQLite journal in the data directory. The password is never printed or logged.',
  },
  databaseCa: {
    schema: optionalText,
    env: 'SMSDROP_DATABASE_CA',
    doc: "CA certificate (PEM) that PostgreSQL's certificate is checked against, instead of Node's roots; with it, TLS to loopback too.",
  },
  lease: {
    schema: lease,
    env: 'SMSDROP_LEASE',
    doc: "PostgreSQL journal: how long a node's claim on batches lasts without a renewal, 2s to 1h; then another node may send them.",
  },
  providerHoldMs: {
    schema: z.preprocess(blankAsUnset, int(0, 3_600_000).optional()),
    env: 'SMSDROP_PROVIDER_HOLD_MS',
    doc: "PostgreSQL journal: how long the provider may still count a request its node has no answer for (its own server timeout). The request's account slot is held that long from its take, and that long again after an answer that never came, so no other node's request takes its place while the provider may still count it. Unset: SMSDROP_RESPONSE_TIMEOUT_MS.",
  },
  nodeId: {
    schema: nodeId,
    env: 'SMSDROP_NODE_ID',
    doc: "PostgreSQL journal: this node's id, shown by status. Unset: HOST:PID.",
  },
  logLevel: {
    schema: z.enum(['error', 'warn', 'info', 'debug']).default('info'),
    env: 'SMSDROP_LOG_LEVEL',
    doc: 'Log level: error, warn, info or debug.',
  },
  logFormat: {
    schema: z.enum(['text', 'json']).default('text'),
    env: 'SMSDROP_LOG_FORMAT',
    doc: 'Log lines on the terminal (info on stdout, warnings and errors on stderr): text (readable; coloured only on a terminal) or json (one JSON object per line, for log shippers). The files in logs/ are always JSON.',
  },
  templatesFile: {
    schema: optionalText,
    env: 'SMSDROP_TEMPLATES_FILE',
    doc: 'JSON file of each template id\'s approved text, e.g. {"1": "【公司】您的验证码是{1}，{2}分钟内有效"}: rows whose values do not fill their template are invalid, and the dry run shows each message and its SMS segments. Unset: config/templates.json when there is one, else no check; off: no check. Named but missing or malformed: start-up stops (E_CONFIG_TEMPLATES).',
  },
  pricePerSegment: {
    schema: pricePerSegment,
    env: 'SMSDROP_PRICE_PER_SEGMENT',
    doc: 'The price of one billable SMS segment, a decimal such as 0.045: the dry run and `report FILE` show the cost (segments counted with the templates file; without it, at least one per number). Unset: no cost shown.',
  },
  currency: {
    schema: currency,
    env: 'SMSDROP_CURRENCY',
    doc: 'The currency the cost is shown in, after the amount (CNY, 元…). Unset: a plain number.',
  },
  progressIntervalMs: {
    schema: int(1_000, 3_600_000).default(10_000),
    env: 'SMSDROP_PROGRESS_INTERVAL_MS',
    doc: 'Daemon: how often a progress line is logged while sending.',
  },
  http: {
    schema: httpAddress,
    env: 'SMSDROP_HTTP',
    doc: 'Daemon: HOST:PORT of the read-only dashboard (/), metrics (/metrics), health check (/healthz) and JSON API (/api/files); off: none. Port 0: any free port (the log says which). An address other than loopback needs SMSDROP_HTTP_TOKEN.',
  },
  httpToken: {
    schema: idText,
    env: 'SMSDROP_HTTP_TOKEN',
    doc: 'Daemon: bearer token every HTTP request must carry (Authorization: Bearer TOKEN); required when SMSDROP_HTTP is not a loopback address. Never printed or logged.',
  },
  httpHosts: {
    schema: optionalText,
    env: 'SMSDROP_HTTP_HOSTS',
    doc: 'Daemon: host names, comma-separated, that HTTP requests may name in their Host header besides loopback ones (localhost, 127.0.0.1, [::1]) while no SMSDROP_HTTP_TOKEN is set; any other is refused (421), so that a web page cannot read the surface through a DNS rebinding name.',
  },
  healthzOpen: {
    schema: onOff.default(false),
    env: 'SMSDROP_HEALTHZ_OPEN',
    doc: 'Daemon: on: /healthz answers without the token too (for load balancers that cannot send a header), with only {"ok": true|false} and 200 or 503; the token still shows the reasons.',
  },
  diskFloorMb: {
    schema: int(0, 1_000_000).default(64),
    env: 'SMSDROP_DISK_FLOOR_MB',
    doc: "Daemon: /healthz answers 503 when the data directory's volume has less free space than this (MB); 0: only a full one.",
  },
  webhookUrl: {
    schema: webhookUrls,
    env: 'SMSDROP_WEBHOOK_URL',
    doc: 'Daemon: URL(s), comma-separated, that get a POST for file.taken, file.finished, file.failed, file.late, file.taken_over, sending.paused and sending.resumed. HTTPS (verified), or plain http to a loopback host. Their credentials and query are never printed.',
  },
  webhookSecret: {
    schema: idText,
    env: 'SMSDROP_WEBHOOK_SECRET',
    doc: "Daemon: key of the X-Smsdrop-Signature header (sha256=HMAC-SHA256 of TIMESTAMP.BODY, TIMESTAMP being the X-Smsdrop-Timestamp header, hex); with dingtalk, the robot's signing secret. Required for the json format. Never printed or logged.",
  },
  webhookFormat: {
    schema: z.enum(WEBHOOK_FORMATS).default('json'),
    env: 'SMSDROP_WEBHOOK_FORMAT',
    doc: "Daemon: json (smsdrop's own body, signed), wecom (a WeCom group robot's markdown message) or dingtalk (a DingTalk group robot's, its URL signed with the secret when one is set).",
  },
} as const;

export type Settings = typeof SETTINGS;
export type Config = { [K in keyof Settings]: z.output<Settings[K]['schema']> } & {
  /** The templates file's texts, loaded with the settings (see templatesFile). */
  templates?: TemplateBook;
};
export type ConfigKey = keyof Settings;
export type ConfigOverrides = Partial<Record<ConfigKey, unknown>>;

/**
 * A bad setting: its code names the setting (settingCode), or the kind of mistake (E_CONFIG_FILE,
 * E_CONFIG_CREDENTIALS…).
 */
export class ConfigError extends SmsdropError {}

/** The stable code of a setting's errors: E_CONFIG_ and its environment name without SMSDROP_. */
export function settingCode(key: ConfigKey): ConfigCode {
  // Environment names are upper case already: toUpperCase only lets the type say so.
  const name = SETTINGS[key].env.replace(/^SMSDROP_/, '').toUpperCase() as Uppercase<string>;
  return `E_CONFIG_${name}`;
}
