// Secrets must never reach a log, a report or an error message. Every log line goes through
// redactSecrets, which removes the auth token (registered at start-up), any sig query parameter
// and any Authorization header value, wherever they appear in the text.

const registeredSecrets = new Set<string>();

/** Registers a value (the auth token) that must be masked wherever it appears. */
export function registerSecret(secret: string | undefined): void {
  if (secret && secret.length >= 4) registeredSecrets.add(secret);
}

const SIG_PARAM = /([?&]sig=)[^&\s"'<>]*/gi;
const AUTH_HEADER = /("?authorization"?\s*[:=]\s*"?)[^"\s,}]+/gi;

export function redactSecrets(text: string): string {
  let out = text.replace(SIG_PARAM, '$1***').replace(AUTH_HEADER, '$1***');
  for (const secret of registeredSecrets) out = out.split(secret).join('***');
  return out;
}

/** An error as one line of a log or a note: its code when the message lacks it, secrets masked. */
export function describeError(err: unknown): string {
  const e = err as NodeJS.ErrnoException;
  const text = e?.message ?? String(err);
  return redactSecrets(e?.code && !text.includes(e.code) ? `${e.code} ${text}` : text);
}
