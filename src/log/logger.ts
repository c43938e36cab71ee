// Logging: JSON lines in <dataDir>/logs/ (rotated daily, size-capped, kept 14 days) and, on the
// terminal, readable lines or (SMSDROP_LOG_FORMAT=json) one JSON object per line for a log shipper.
// On the terminal, by the usual convention, info and debug go to stdout and warnings and errors to
// stderr: pm2 (and systemd, and a shell's 2>) keep them apart, so that its error log and the red of
// `pm2 logs` mean something went wrong. A command whose stdout is its output for a program
// (`--json`) keeps every log line on stderr.
// Readable lines are coloured only on a terminal: pm2's log files and pipes get plain text. Every
// line passes through redactSecrets first, so the auth token, a sig parameter or an
// Authorization value cannot reach a log whatever the caller passes.
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import winston from 'winston';
import { checkDataDir, checkLogDir } from '../datadir/dataDir.js';
import { errorCode, machineCode } from '../errors.js';
import DailyRotateFile from 'winston-daily-rotate-file';
import { redactSecrets } from './redact.js';

export type Logger = winston.Logger;

export const LOG_FORMATS = ['text', 'json'] as const;
export type LogFormat = (typeof LOG_FORMATS)[number];

export interface LoggerOptions {
  level: string;
  /** Folder for JSON log files; none: terminal only. */
  logDir?: string;
  /** Output on the terminal (default true). */
  console?: boolean;
  /**
   * Info and debug lines on stdout (default true); false: every line on stderr, for a command
   * whose stdout is read by a program (`--json`).
   */
  stdout?: boolean;
  /** What goes to the terminal: readable lines (default) or one JSON object per line. */
  format?: LogFormat;
  /** Colour the level of readable lines; default: only when the streams written are a terminal. */
  colour?: boolean;
}

const redact = winston.format((info) => {
  const clean = JSON.parse(
    redactSecrets(JSON.stringify(info)),
  ) as winston.Logform.TransformableInfo;
  for (const key of Object.keys(info)) if (!(key in clean)) delete info[key];
  Object.assign(info, clean);
  return info;
});

const readable = winston.format.printf((info) => {
  const { level, message, timestamp, ...rest } = info;
  const extra = Object.keys(rest).length ? ` ${JSON.stringify(rest)}` : '';
  return `${String(timestamp)} ${level} ${String(message)}${extra}`;
});

export function createLogger(options: LoggerOptions): Logger {
  const transports: winston.transport[] = [];
  if (options.console !== false) {
    const split = options.stdout !== false;
    const onTerminal = process.stderr.isTTY === true && (!split || process.stdout.isTTY === true);
    const colour = options.colour ?? onTerminal;
    const format =
      options.format === 'json'
        ? winston.format.json()
        : colour
          ? winston.format.combine(winston.format.colorize({ all: false }), readable)
          : readable;
    const stderrLevels = split ? ['error', 'warn'] : ['error', 'warn', 'info', 'debug'];
    transports.push(new winston.transports.Console({ stderrLevels, format }));
  }
  if (options.logDir) {
    // The log folder lies in the data directory: a bad one is told as such, not as a stack from the
    // rotation.
    checkDataDir(path.dirname(options.logDir));
    checkLogDir(options.logDir);
    transports.push(
      new DailyRotateFile({
        dirname: options.logDir,
        filename: 'smsdrop-%DATE%.log',
        datePattern: 'YYYY-MM-DD',
        maxSize: '50m',
        maxFiles: '14d',
        format: winston.format.json(),
      }),
    );
  }
  const logger = winston.createLogger({
    level: options.level,
    format: winston.format.combine(winston.format.timestamp(), redact()),
    transports,
  });
  if (options.logDir) {
    fileLoggers.add(logger);
    for (const t of transports) if (t instanceof DailyRotateFile) onFileFailure(logger, t);
  }
  return logger;
}

/**
 * A log file that cannot be written any more (the disk filled up) must not stop the program: an
 * unhandled stream error would end it with a stack and exit 1. The file is dropped, and the
 * terminal (pm2's log) says so once, with the code; what ran out of room says the rest.
 */
function onFileFailure(logger: Logger, file: DailyRotateFile): void {
  const stream = (file as unknown as { logStream?: NodeJS.EventEmitter }).logStream;
  const failed = (err: unknown) => {
    if (!logger.transports.includes(file)) return;
    logger.remove(file);
    const code = machineCode(errorCode(err)) ?? 'E_LOG_DIR';
    logger.warn(
      `${code}: the log file in ${file.dirname} cannot be written (${(err as Error)?.message ?? String(err)}): log lines go to the terminal only`,
      { event: 'log-file-failed', code },
    );
  };
  stream?.on('error', failed);
  file.on('error', failed);
}

/**
 * Loggers that write files, so that an error nobody caught still reaches a log file with its stack.
 */
const fileLoggers = new Set<Logger>();

/**
 * Writes an error nobody caught, with its stack, to the log files of the loggers still open (not
 * to the terminal: the caller prints one line there), and ends them so the lines reach the disk.
 * Returns the folders written to (none: the caller prints the stack itself).
 */
export async function logUnexpected(err: unknown): Promise<string[]> {
  const dirs: string[] = [];
  for (const log of fileLoggers) {
    if (log.writableEnded) continue;
    for (const t of log.transports) if (t instanceof winston.transports.Console) log.remove(t);
    const files = log.transports.filter((t): t is DailyRotateFile => t instanceof DailyRotateFile);
    dirs.push(...files.map((t) => (t as unknown as { dirname: string }).dirname));
    log.error(`unexpected error: ${(err as Error)?.message ?? String(err)}`, {
      event: 'unexpected-error',
      stack: (err as Error)?.stack ?? String(err),
    });
    await closeLogger(log);
  }
  return dirs;
}

/**
 * Ends a logger and closes its file streams, waiting (2 s at most each) for the last lines to be
 * written, so they reach the log file before the process exits.
 */
export async function closeLogger(log: Logger): Promise<void> {
  // Taken first: an ended logger no longer lists its transports. The rotating file transport
  // writes its last lines only when its own stream is closed, after the logger has finished.
  const files = log.transports.filter((t): t is DailyRotateFile => t instanceof DailyRotateFile);
  const finished = new Promise<void>((resolve) => log.once('finish', () => resolve()));
  log.end();
  await Promise.race([finished, sleep(2_000)]);
  const flushed = files.map(
    (t) =>
      new Promise<void>((resolve) => {
        t.once('finish', () => resolve());
        (t as unknown as { close(): void }).close();
      }),
  );
  await Promise.race([Promise.all(flushed), sleep(2_000)]);
}

/** A logger that drops everything: for library use and quiet tests. */
export function silentLogger(): Logger {
  return winston.createLogger({
    silent: true,
    transports: [new winston.transports.Console({ silent: true })],
  });
}

export function logDirOf(dataDir: string): string {
  return path.join(dataDir, 'logs');
}
