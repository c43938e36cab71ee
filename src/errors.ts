// The base of smsdrop's own errors: each carries a stable code (as undici's do), so code that
// tells errors apart reads `code`, never a message or a class name. docs/errors.md lists them, and
// a test holds ERROR_CODES and that list to each other.

/**
 * The exit statuses of every command (README, `smsdrop --help`): 2 a usage, configuration or
 * file-level error; 3 the work ended incomplete; 1 anything unexpected.
 */
export const EXIT = { ok: 0, unexpected: 1, usage: 2, incomplete: 3 } as const;

/** Every code smsdrop gives an error, but the settings' own (ConfigCode). */
export const ERROR_CODES = [
  // settings as a whole; each setting has its own code besides (ConfigCode)
  'E_CONFIG_FILE',
  'E_CONFIG_UNKNOWN_SETTING',
  'E_CONFIG_CREDENTIALS',
  'E_CONFIG_TEMPLATES',
  // the data directory and the machine
  'E_DATA_DIR_NOT_A_DIRECTORY',
  'E_DATA_DIR_READONLY',
  'E_DATA_DIR_UNUSABLE',
  'E_DATA_DIR_LOCKED',
  'E_DATA_DIR_OPEN',
  'E_HTTP_ADDRESS_IN_USE',
  'E_LOG_DIR',
  'E_DISK_FULL',
  'E_SQLITE_NOT_INSTALLED',
  // the journal
  'E_JOURNAL_WRITE',
  'E_JOURNAL_LOST',
  'E_JOURNAL_CORRUPT',
  'E_JOURNAL_NEEDS_UPGRADE',
  'E_JOURNAL_NEWER',
  'E_MIGRATE_TARGET_NOT_EMPTY',
  'E_MIGRATE_TARGET_UNREACHABLE',
  'E_BACKUP_INTEGRITY',
  'E_DATABASE_UNREACHABLE',
  'E_DATABASE_AUTH',
  'E_BACKUP_POSTGRES',
  'E_JOURNAL_POSTGRES',
  'E_FILE_CLAIM_LOST',
  'E_INTAKE_TURN_YIELDED',
  // the provider
  'E_PROVIDER_CHANGED',
  'E_PROVIDER_AUTH',
  'E_PROVIDER_ACCOUNT',
  'E_PROVIDER_BALANCE',
  'E_PROVIDER_APP',
  'E_PROVIDER_IP',
  'E_PROVIDER_CLOCK',
  'E_PROVIDER_TLS',
  'E_PROVIDER_UNREACHABLE',
  'E_PROVIDER_FAILING',
  // files refused as a whole
  'E_FILE_UNREADABLE',
  'E_FILE_NOT_CSV',
  'E_FILE_EXCEL',
  'E_FILE_UTF16',
  'E_FILE_MIXED_ENCODING',
  'E_FILE_ENCODING_AMBIGUOUS',
  'E_FILE_EMPTY',
  'E_FILE_NO_ROWS',
  'E_FILE_QUOTE',
  'E_FILE_LONG_RECORD',
  'E_FILE_CSV',
  'E_FILE_CHANGED',
  'E_FILE_PRUNED',
  'E_NO_PHONE_COLUMN',
  'E_NO_TEMPLATE_COLUMN',
  'E_NO_APP_COLUMN',
  'E_HEADER_TWO_COLUMNS',
  'E_HEADER_VALUE_COLUMNS',
  // the daemon
  'E_RESUME_LATE',
  'E_UNEXPECTED',
  // arguments
  'E_USAGE',
  'E_NOT_A_FILE',
  'E_CONTROL_REFUSED',
  'E_ROWS_PRUNED',
  // bugs
  'E_BATCH_TRANSITION',
  'E_BATCH_MISSING',
  'E_PLAN_INPUT',
  'E_INTERNAL',
  'E_ABORTED',
] as const;

/** The codes of the settings: `E_CONFIG_` and the setting's environment name without SMSDROP_. */
export type ConfigCode = `E_CONFIG_${Uppercase<string>}`;

/** A stable code of smsdrop's: one of ERROR_CODES, or a setting's. */
export type ErrorCode = (typeof ERROR_CODES)[number] | ConfigCode;

export class SmsdropError extends Error {
  constructor(
    readonly code: ErrorCode,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = new.target.name;
  }
}

/** A command's argument is wrong: the command prints the message and exits 2. */
export class UsageError extends SmsdropError {
  constructor(message: string, options?: { cause?: unknown }) {
    super('E_USAGE', message, options);
  }
}

/**
 * The error's stable code, if it is one of smsdrop's (or a system error's: ENOSPC, SQLITE_FULL…).
 */
export function errorCode(err: unknown): string | undefined {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === 'string' ? code : undefined;
}

/** Network failures reaching the journal's database server. */
const UNREACHABLE_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EPIPE',
  'EHOSTUNREACH',
]);
/**
 * PostgreSQL's SQLSTATEs of a server going or gone (admin or crash shutdown, starting up), and of
 * a transaction it ended to break a deadlock or a serialization conflict.
 */
const SERVER_GONE_CODES = new Set(['57P01', '57P02', '57P03', '40P01', '40001']);

/**
 * pg's and pg-pool's words, without a code, for a connection the server or the network ended (or
 * a query on a client that met that end), and for a checkout that found every connection of the
 * pool held past the connect timeout (their statements wait on a server that does not answer: a
 * partition).
 */
const POOL_GONE = [
  'Connection terminated',
  'timeout exceeded when trying to connect',
  'Client has encountered a connection error',
  'Client was closed',
];

/**
 * The journal's database server is unreachable or restarting (a PostgreSQL journal): not the
 * file's fault, nor a bug: what was being done is tried again once it answers. Follows `cause`.
 */
export function isDatabaseOutage(err: unknown): boolean {
  for (let e = err, depth = 0; e && depth < 5; e = (e as { cause?: unknown }).cause, depth++) {
    const code = errorCode(e);
    if (code === 'E_DATABASE_UNREACHABLE' || (code && UNREACHABLE_CODES.has(code))) return true;
    if (code && (code.startsWith('08') || SERVER_GONE_CODES.has(code))) return true;
    const message = String((e as Error).message ?? '');
    if (POOL_GONE.some((words) => message.startsWith(words))) return true;
  }
  return false;
}

/** Whether `err`, or an error it was caused by, has this code. */
export function hasCode(err: unknown, code: ErrorCode): boolean {
  for (let e = err, depth = 0; e && depth < 5; e = (e as { cause?: unknown }).cause, depth++)
    if (errorCode(e) === code) return true;
  return false;
}

/**
 * Codes that mean a bug in smsdrop, not a setting or the machine: they exit 1 with the stack,
 * like any error nobody expected.
 */
const BUG_CODES: ReadonlySet<ErrorCode> = new Set<ErrorCode>([
  'E_BATCH_TRANSITION',
  'E_BATCH_MISSING',
  'E_PLAN_INPUT',
  'E_INTERNAL',
]);

/**
 * What a user can act on, as one of smsdrop's errors: smsdrop's own (not a bug), or SQLite's and
 * the system's that say the disk or the data directory is wrong. Undefined for anything else
 * (unexpected: exit 1, stack in the log).
 */
export function userError(err: unknown): SmsdropError | undefined {
  if (err instanceof SmsdropError) return BUG_CODES.has(err.code) ? undefined : err;
  const code = machineCode(errorCode(err));
  if (!code) return undefined;
  return new SmsdropError(
    code,
    `${MACHINE_ADVICE[code]} (${errorCode(err)}: ${(err as Error).message})`,
    { cause: err },
  );
}

/**
 * Codes that say the machine or the journal failed, not the input: a file is never to blame for
 * them.
 */
const MACHINE_CODES: ReadonlySet<string> = new Set<ErrorCode>([
  'E_DISK_FULL',
  'E_DATA_DIR_READONLY',
  'E_DATA_DIR_UNUSABLE',
  'E_JOURNAL_WRITE',
  'E_JOURNAL_CORRUPT',
  'E_JOURNAL_LOST',
]);

export function isMachineCode(code: string): boolean {
  return MACHINE_CODES.has(code);
}

/** smsdrop's code for SQLite's or the system's, when it says the machine is the problem. */
export function machineCode(code: string | undefined): MachineCode | undefined {
  if (!code) return undefined;
  // SQLITE_IOERR_SHMSIZE: the -shm file could not grow, which on a full disk comes before
  // SQLITE_FULL.
  if (
    code === 'SQLITE_FULL' ||
    code === 'SQLITE_IOERR_SHMSIZE' ||
    code === 'ENOSPC' ||
    code === 'EDQUOT' ||
    code === 'EFBIG'
  )
    return 'E_DISK_FULL';
  if (code.startsWith('SQLITE_READONLY') || code === 'EROFS') return 'E_DATA_DIR_READONLY';
  if (code.startsWith('SQLITE_CANTOPEN')) return 'E_DATA_DIR_UNUSABLE';
  if (code.startsWith('SQLITE_IOERR')) return 'E_JOURNAL_WRITE';
  if (code === 'SQLITE_CORRUPT' || code === 'SQLITE_NOTADB') return 'E_JOURNAL_CORRUPT';
  return undefined;
}

type MachineCode =
  | 'E_DISK_FULL'
  | 'E_DATA_DIR_READONLY'
  | 'E_DATA_DIR_UNUSABLE'
  | 'E_JOURNAL_WRITE'
  | 'E_JOURNAL_CORRUPT';

const MACHINE_ADVICE: Record<MachineCode, string> = {
  E_DISK_FULL:
    'no space left on the disk of the data directory: free some, then run the same command again (nothing is sent twice)',
  E_DATA_DIR_READONLY:
    'the data directory cannot be written (read-only?): give smsdrop a writable one (SMSDROP_DATA_DIR)',
  E_DATA_DIR_UNUSABLE:
    'the journal in the data directory cannot be opened: check that SMSDROP_DATA_DIR is a directory smsdrop may write',
  E_JOURNAL_WRITE:
    'the journal could not be written (an I/O error): check the disk of the data directory, then run the same command again',
  E_JOURNAL_CORRUPT:
    'the journal file is damaged or is not a journal: restore it from a backup, or move it aside to start a new journal',
};

/** "E_CODE: message": how an error with a code is shown to a user everywhere. */
export function withCode(err: SmsdropError): string {
  return `${err.code}: ${err.message}`;
}
