// The base of smsdrop's own errors: each carries a stable code (as undici's do), so code that
// tells errors apart reads `code`, never a message or a class name. docs/errors.md lists them.
export class SmsdropError extends Error {
  constructor(
    readonly code: string,
    message: string,
  ) {
    super(message);
    this.name = new.target.name;
  }
}

/**
 * The error's stable code, if it is one of smsdrop's (or a system error's: ENOSPC, SQLITE_FULL…).
 */
export function errorCode(err: unknown): string | undefined {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === 'string' ? code : undefined;
}

/**
 * Codes that mean a bug in smsdrop, not a setting or the machine: they exit 1 with the stack,
 * like any error nobody expected.
 */
const BUG_CODES: ReadonlySet<string> = new Set([
  'E_BATCH_TRANSITION',
  'E_BATCH_MISSING',
  'E_PLAN_INPUT',
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
  const mapped = new SmsdropError(
    code,
    `${MACHINE_ADVICE[code]} (${errorCode(err)}: ${(err as Error).message})`,
  );
  mapped.cause = err;
  return mapped;
}

/**
 * Codes that say the machine or the journal failed, not the input: a file is never to blame for
 * them.
 */
const MACHINE_CODES: ReadonlySet<string> = new Set([
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
export function machineCode(code: string | undefined): string | undefined {
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

const MACHINE_ADVICE: Record<string, string> = {
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
