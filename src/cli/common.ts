// Helpers shared by the commands: settings from the global flags, and exits with the documented
// status codes (2: usage, configuration or file-level error; 1: anything unexpected).
import type { Command } from 'commander';
import { type Config, type ConfigOverrides, loadConfig } from '../config/index.js';
import { guardDataDir } from '../datadir/permissions.js';
import { type ErrorCode, EXIT, type SmsdropError, userError, withCode } from '../errors.js';
import { createLogger, type Logger } from '../log/logger.js';
import { redactSecrets } from '../log/redact.js';

export { EXIT };

/** Global flags that are also settings (`smsdrop --data-dir X send ...`). */
export function addSettingFlags(program: Command): Command {
  return program
    .option('--data-dir <dir>', 'data directory (SMSDROP_DATA_DIR)')
    .option('--body-format <format>', 'request and response format, json or xml (SMSDROP_FORMAT)')
    .option('--concurrency <n>', 'requests in flight at most (SMSDROP_CONCURRENCY)')
    .option('--max-per-request <n>', 'numbers per request, 1 to 200 (SMSDROP_MAX_PER_REQUEST)')
    .option('--req-id <on|off>', 'send a stable reqId per batch (SMSDROP_REQ_ID)')
    .option(
      '--requests-per-second <n>',
      'pace requests; 0 = no limit (SMSDROP_REQUESTS_PER_SECOND)',
    )
    .option(
      '--messages-per-second <n>',
      'pace numbers sent to; 0 = no limit (SMSDROP_MESSAGES_PER_SECOND)',
    )
    .option(
      '--message-window <N/DURATION>',
      'at most N numbers per sliding span, e.g. 10000/1h (SMSDROP_MESSAGE_WINDOW)',
    )
    .option('--log-level <level>', 'error, warn, info or debug (SMSDROP_LOG_LEVEL)');
}

/**
 * Merged settings for a command; on a bad value prints the reason and exits 2. forReading: the
 * command only reads the journal, and the provider's settings are not looked at. Also sets who may
 * read what the command writes, and says (once) when others may read the data directory
 * (datadir/permissions.ts).
 */
export function configFor(command: Command, options: { forReading?: boolean } = {}): Config {
  const flags = command.optsWithGlobals<Record<string, unknown>>();
  const overrides: ConfigOverrides = {
    dataDir: flags.dataDir,
    format: flags.bodyFormat,
    concurrency: flags.concurrency,
    maxPerRequest: flags.maxPerRequest,
    reqId: flags.reqId,
    requestsPerSecond: flags.requestsPerSecond,
    messagesPerSecond: flags.messagesPerSecond,
    messageWindow: flags.messageWindow,
    logLevel: flags.logLevel,
  };
  try {
    const config = loadConfig({ flags: overrides, ...options });
    // Before anything is opened or written: every command's files get the same modes.
    guardDataDir(config, (message) =>
      createLogger({ level: 'warn', format: config.logFormat }).warn(message, {
        event: 'data-dir-open',
        code: 'E_DATA_DIR_OPEN',
      }),
    );
    return config;
  } catch (err) {
    exitOnUserError(err);
    throw err;
  }
}

/**
 * An error a user can act on (a setting, an argument, a file, the machine: see userError) exits
 * 2 with one line, `smsdrop: E_CODE: message`, and no stack. Anything else returns, for the
 * caller to rethrow.
 */
export function exitOnUserError(err: unknown, after = ''): void {
  const known = userError(err);
  if (known) exitWith(EXIT.usage, `smsdrop: ${withCode(known)}${after}`);
}

/**
 * Says why sending stopped for the account, with its code, in the log; a pause the operator must
 * fix first (a token, an account, a certificate: every code but E_PROVIDER_FAILING, an outage) is
 * also the one line `smsdrop: E_CODE: message` and exit 2, like every set-up error. Returns the
 * exit status.
 */
export function tellPause(
  pause: { reason: string; code: ErrorCode },
  log: Logger,
  again: string,
): number {
  const told = `${pause.code}: ${pause.reason}. Fix it, then run the same command again${again}.`;
  log.error(`sending stopped: ${told}`, { code: pause.code });
  if (pause.code === 'E_PROVIDER_FAILING') return EXIT.incomplete;
  process.stderr.write(`${redactSecrets(`smsdrop: ${told}`)}\n`);
  return EXIT.usage;
}

/** One of smsdrop's errors, as the one line `smsdrop: E_CODE: message`, and exit 2. */
export function exitWithError(err: SmsdropError): never {
  exitWith(EXIT.usage, `smsdrop: ${withCode(err)}`);
}

export function exitWith(code: number, message?: string): never {
  if (message) process.stderr.write(`${redactSecrets(message)}\n`);
  process.exit(code);
}
