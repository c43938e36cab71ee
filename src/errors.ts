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

/** The error's stable code, if it is one of smsdrop's (or a system error's: ENOSPC, SQLITE_FULL…). */
export function errorCode(err: unknown): string | undefined {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === 'string' ? code : undefined;
}
